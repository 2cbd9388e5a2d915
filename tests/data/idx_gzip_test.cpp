// IDX files, plain and gzip (zlib): the real Fashion-MNIST files, and truncated/corrupt files as clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <torchfit/data/idx.h>
#include <torchfit/error.h>

#include "support/image_tree.h"
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

TEST(IdxGzip, ReadsPlainAndGzippedIdxAndRefusesAShortOne) {
  torchfit::testing::TempDir d;
  const std::vector<uint8_t> idx = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2, 5, 6, 7, 8};
  torchfit::testing::write_bytes(d.file("a.idx"), idx);
  const data::IdxArray a = data::read_idx_file(d.file("a.idx"));
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(a.data, (std::vector<uint8_t>{5, 6, 7, 8}));
  const std::string cmd = "gzip -c " + d.file("a.idx") + " > " + d.file("a.idx.gz");
  if (std::system(cmd.c_str()) == 0) {
    const data::IdxArray b = data::read_idx_file(d.file("a.idx.gz"));
    EXPECT_EQ(b.dims, a.dims);
    EXPECT_EQ(b.data, a.data);
  }
  torchfit::testing::write_bytes(d.file("short.idx"), {0, 0, 8, 1, 0, 0, 0, 9, 1});
  EXPECT_THROW(data::read_idx_file(d.file("short.idx")), IoError);
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
