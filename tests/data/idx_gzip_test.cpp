// gzip reading through zlib: the real Fashion-MNIST files, and truncated/corrupt files as clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <torchfit/data/idx.h>
#include <torchfit/error.h>

#include "support/temp_dir.h"

using namespace torchfit;

TEST(IdxGzip, ReadsDebianFashionMnistLabels) {
  const std::string path = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  auto a = data::read_idx_file(path);
  ASSERT_EQ(a.dims, (std::vector<int64_t>{10000}));
  EXPECT_EQ(a.data[0], 9);  // the first test image is an ankle boot
  EXPECT_EQ(a.data[1], 2);  // then a pullover
}

TEST(IdxGzip, TruncatedAndCorruptFilesNameTheFile) {
  const std::string src = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!std::filesystem::exists(src)) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  torchfit::testing::TempDir dir("gz");
  const auto cut = dir.path / "cut.gz";
  std::filesystem::copy_file(src, cut);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  try {
    data::read_gzip_file(cut.string());
    FAIL() << "truncated gzip accepted";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.gz"), std::string::npos) << e.what();
  }
  const auto junk = dir.path / "junk.gz";
  std::ofstream(junk) << "not gzip";
  EXPECT_THROW(data::read_gzip_file(junk.string()), IoError);
}
