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

// Issue 26: the temporary of an atomic write fits in NAME_MAX for every legal target name.
TEST(AtomicFile, EveryLegalNameUpTo255BytesIsWrittenAndLeavesNoTemporary) {
  TempDir dir("atomic_long");
  for (const size_t n : {size_t{200}, size_t{240}, size_t{241}, size_t{250}, size_t{255}}) {
    const std::string a = dir.file(std::string(n - 1, 'w') + "a"), b = dir.file(std::string(n - 1, 'w') + "b");
    ASSERT_NO_THROW(io::write_text_atomically(a, "first")) << n << " bytes";
    ASSERT_NO_THROW(io::write_text_atomically(b, "second")) << n << " bytes";
    ASSERT_NO_THROW(io::write_text_atomically(a, "third")) << n << " bytes, replacing";
    std::ifstream fa(a), fb(b);
    std::string sa, sb;
    fa >> sa;
    fb >> sb;
    EXPECT_EQ(sa, "third");
    EXPECT_EQ(sb, "second");
  }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    files += e.path().filename().string().front() != '.';
  EXPECT_EQ(files, 10);
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    EXPECT_NE(e.path().filename().string().front(), '.') << "temporary left: " << e.path();
}
