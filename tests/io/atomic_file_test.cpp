// Atomic writes: a failed write leaves the earlier file intact and no temporary file behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>

#include "support/temp_dir.h"

using namespace torchfit;
using torchfit::testing::TempDir;

TEST(AtomicFile, FailureLeavesTheOldFileIntact) {
  TempDir dir("atomic");
  const std::string path = (dir.path / "a.txt").string();
  io::write_text_atomically(path, "old");
  EXPECT_THROW(io::write_atomically(path,
                                    [](const std::string& tmp) {
                                      std::ofstream(tmp) << "partial";
                                      throw std::runtime_error("disk full");
                                    }),
               IoError);
  std::ifstream f(path);
  std::string s;
  f >> s;
  EXPECT_EQ(s, "old");
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
  EXPECT_THROW(io::write_text_atomically((dir.path / "no" / "x").string(), "x"), IoError);
  EXPECT_THROW(io::ensure_writable_directory(path + "/sub"), IoError);
}
