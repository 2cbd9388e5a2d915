// Weights whose declared shapes or sizes are far larger than the model needs (issue 37, item 3): Keras
// .h5 datasets, .keras zip entries and torchfit checkpoints are refused by what they declare, before
// memory is spent on it, with an error naming the file, the layer, the weight and both shapes. The
// files are written by tests/saving/shape_bomb.py (h5py, Python's zipfile); the good ones are checked
// against its NumPy forward pass.
#include <gtest/gtest.h>

#include <cstdlib>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/trainer.h>

#include "support/keras_fixture_suite.h"
#include "support/npy.h"
#include "support/peak_memory.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace torchfit {
namespace {

constexpr long kMaxGrowthKb = 64 << 10;  // 64 MiB: the 20000 x 20000 kernel alone would take 1.6 GB (3.2 GB as float64)

class ShapeBomb : public testing::KerasFixtureSuite<ShapeBomb> {
 public:
  static constexpr const char* kScript = "tests/saving/shape_bomb.py";
  static constexpr const char* kTag = "shape_bomb";

 protected:
  // load_keras_model(name) throws E whose message holds every one of `parts`, and the peak resident
  // memory rises less than kMaxGrowthKb meanwhile.
  template <typename E>
  static void expect_refused_fast(const std::string& name, const std::vector<std::string>& parts) {
    testing::PeakMemory peak;
    try {
      keras::load_keras_model(file(name));
      ADD_FAILURE() << name << " loaded";
    } catch (const E& e) {
      const std::string m = e.what();
      for (const auto& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
    }
    if (peak.usable()) {
      EXPECT_LT(peak.growth_kb(), kMaxGrowthKb)
          << name << ": the peak resident size grew by " << peak.growth_kb() << " kB before the refusal";
    } else {
      std::cout << "[ note ] no memory assertion: " << peak.why() << "\n";
    }
  }
};

TEST_F(ShapeBomb, TheWellFormedFilesMatchTheNumpyReference) {
  const at::Tensor x = testing::nchw(testing::npy_tensor(file("input.npy")));
  for (const char* name : {"ok.h5", "ok.keras"}) {
    auto model = keras::load_keras_model(file(name));
    torch::NoGradGuard no_grad;
    EXPECT_LT((model->forward(x) - testing::npy_tensor(file("expected.npy"))).abs().max().item<double>(), 1e-6) << name;
  }
}

TEST_F(ShapeBomb, AnH5KernelDeclaringTwentyThousandSquaredIsRefusedBeforeItIsRead) {
  // 16 KB on disk, nothing stored: reading it first took 3.3 GB.
  expect_refused_fast<ConfigError>(
      "bomb.h5", {file("bomb.h5"), "layer 'dense' (Dense)", "'dense/kernel:0'", "(20000, 20000) float32", "(4, 3)"});
}

TEST_F(ShapeBomb, AnEightyGigabyteDeclarationNamesTheFileNotTheAllocator) {
  expect_refused_fast<ConfigError>(
      "huge.h5", {file("huge.h5"), "layer 'dense'", "'dense/kernel:0'", "(200000, 100000) float32", "(4, 3)"});
}

TEST_F(ShapeBomb, AnIntegerKernelIsRefusedByItsDeclaredType) {
  expect_refused_fast<ConfigError>("int_kernel.h5", {file("int_kernel.h5"), "'dense/kernel:0'", "int32"});
}

TEST_F(ShapeBomb, AKerasZipDatasetIsCheckedTheSameWay) {
  expect_refused_fast<ConfigError>(
      "bomb.keras", {file("bomb.keras"), "layer 'dense' (Dense)", "'vars/0'", "(20000, 20000) float32", "(4, 3)"});
}

TEST_F(ShapeBomb, AZipEntryDeclaringMoreThanDeflateCanHoldIsRefusedBeforeInflating) {
  // A 1 KB archive whose central directory says model.weights.h5 is 3 GB: reading it allocated 3 GB.
  expect_refused_fast<IoError>("lying_size.keras",
                               {file("lying_size.keras"), "model.weights.h5", "3000000000", "1032:1"});
}

TEST_F(ShapeBomb, AZipEntryLargerThanTheModelCanNeedIsRefusedBeforeInflating) {
  // 64 KB deflated to 64 MiB of weights file for a model of 15 numbers: bounded by what the model needs.
  expect_refused_fast<IoError>("inflating.keras", {file("inflating.keras"), "zip entry model.weights.h5 declares",
                                                   "the model's weights can take"});
  // read_keras_file without a budget reads it (the bound is the model's, the archive's bounds hold).
  const auto f = keras::read_keras_file(file("inflating.keras"));
  ASSERT_NE(f.find("dense"), nullptr);
  EXPECT_EQ(f.find("dense")->shapes[0], (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(f.find("dense")->dtypes[0], "float32");
}

TEST_F(ShapeBomb, ReadKerasFileListsDeclaredShapesWithoutReadingThem) {
  testing::PeakMemory peak;
  const auto f = keras::read_keras_file(file("huge.h5"));
  ASSERT_NE(f.find("dense"), nullptr);
  EXPECT_EQ(f.find("dense")->shapes[0], (std::vector<int64_t>{200000, 100000}));
  EXPECT_EQ(f.find("dense")->names[0], "dense/kernel:0");
  if (peak.usable()) EXPECT_LT(peak.growth_kb(), kMaxGrowthKb);
}

// A checkpoint whose second layer does not fit: refused naming the parameter and both shapes, and the
// model keeps every weight it had (nothing is copied before all shapes are checked).
TEST(CheckpointShapes, AMismatchLaterInTheModelLeavesEveryWeightAsItWas) {
  testing::TempDir dir("ckpt_shapes");
  at::manual_seed(3);
  Trainer t(testing::tiny_mlp(4, 5), CompileOptions());
  const std::string path = dir.file("m.ckpt");
  t.save_checkpoint(path);
  auto other = testing::tiny_mlp(4, 3);  // dense (8, 4) fits, dense_1 (3, 8) does not
  const at::Tensor before = other->get_layer("dense")->named_parameters()["kernel"].clone();
  try {
    saving::load_weights(path, *other);
    FAIL() << "loaded";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    for (const std::string& p : std::vector<std::string>{path, "dense_1.kernel", "(5, 8)", "(3, 8)", "nothing loaded"})
      EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  }
  EXPECT_TRUE(at::equal(other->get_layer("dense")->named_parameters()["kernel"], before));
}

// A checkpoint whose dense.kernel declares the model's shape (8, 4) on a storage of one element: refused
// (LibTorch's reader accepts it, and copying it read past the storage: NaN or garbage).
TEST(CheckpointShapes, ATensorReachingPastItsStorageIsRefused) {
  testing::TempDir dir("ckpt_short");
  Trainer t(testing::tiny_mlp(4, 3), CompileOptions());
  const std::string path = dir.file("m.ckpt"), bad = dir.file("short.ckpt");
  t.save_checkpoint(path);
  const std::string cmd = "/usr/bin/python3 " + std::string(TORCHFIT_SOURCE_DIR) +
                          "/tests/saving/shape_bomb.py --short-storage " + path + " " + bad + " 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "tests/saving/shape_bomb.py failed (needs /usr/bin/python3)";
  auto model = testing::tiny_mlp(4, 3);
  try {
    saving::load_weights(bad, *model);
    FAIL() << "loaded";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(bad), std::string::npos) << m;
    if (m.find("cannot be read") != std::string::npos) return;  // a LibTorch whose reader checks it itself
    for (const std::string& p : std::vector<std::string>{"'dense.kernel'", "(8, 4) Float", "holds 4 bytes"})
      EXPECT_NE(m.find(p), std::string::npos) << "'" << p << "' not in: " << m;
  }
}

}  // namespace
}  // namespace torchfit
