#pragma once
// A GoogleTest suite over Keras files that a Python script (/usr/bin/python3 with h5py, numpy; Keras's
// layouts written by hand) writes once per test binary run, and the tensors those scripts save.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <torchfit/keras/keras_import.h>

#include "support/npy.h"
#include "support/temp_dir.h"

namespace torchfit::testing {

/// A float32 tensor of the .npy file at `path`.
inline at::Tensor npy_tensor(const std::string& path) {
  const auto a = read_npy(path);
  auto v = a.values<float>();
  return torch::from_blob(v.data(), a.shape, at::kFloat).clone();
}

/// NHWC (a Keras model's input) → torchfit's NCHW; other ranks unchanged.
inline at::Tensor nchw(const at::Tensor& x) { return x.dim() == 4 ? x.permute({0, 3, 1, 2}).contiguous() : x; }

/// The suite `Derived` (which names its script `static constexpr const char* kScript`, a path below the
/// source tree, and a TempDir tag `kTag`; optionally `static std::vector<std::string> script_args()`):
/// the script runs once before the suite's first test with the fixture folder as its first argument;
/// every test skips, saying why, when torchfit has no Keras import or /usr/bin/python3 lacks h5py or NumPy,
/// and FAILS with the script's error output when the script itself fails (a broken fixture is a defect).
template <typename Derived>
class KerasFixtureSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir() = std::make_unique<TempDir>(Derived::kTag);
    std::string cmd =
        "/usr/bin/python3 " + std::string(TORCHFIT_SOURCE_DIR) + "/" + Derived::kScript + " " + dir()->str();
    for (const auto& a : Derived::script_args()) cmd += " " + a;
    if (std::system("/usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1") != 0) {
      skip() = "needs /usr/bin/python3 with h5py and numpy (Debian python3-h5py, python3-numpy)";
      return;
    }
    const std::string err = dir()->str() + "/py.err";
    if (std::system((cmd + " 2>" + err).c_str()) != 0) {
      std::ifstream in(err);
      failure() = cmd + " failed:\n" + std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  static void TearDownTestSuite() { dir().reset(); }
  void SetUp() override {
    if (!keras::keras_import_available()) GTEST_SKIP() << "torchfit built without HDF5/libzip (Keras import off)";
    if (!skip().empty()) GTEST_SKIP() << Derived::kScript << ": " << skip();
    if (!failure().empty()) FAIL() << failure();
  }
  static std::vector<std::string> script_args() { return {}; }
  /// The fixture file `name`.
  static std::string file(const std::string& name) { return dir()->str() + "/" + name; }

 private:
  static std::unique_ptr<TempDir>& dir() {
    static std::unique_ptr<TempDir> d;
    return d;
  }
  static std::string& skip() {
    static std::string why;
    return why;
  }
  static std::string& failure() {
    static std::string what;
    return what;
  }
};

}  // namespace torchfit::testing
