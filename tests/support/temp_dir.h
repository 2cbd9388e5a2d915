#pragma once
// A temporary directory removed at scope exit.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace torchfit::testing {

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag = "test") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("torchfit_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path.string(); }
  /// Path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path / name).string(); }
};

}  // namespace torchfit::testing
