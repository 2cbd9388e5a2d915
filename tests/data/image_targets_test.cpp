// Image folders with numeric targets from a CSV (Keras's flow_from_dataframe, class_mode "raw"): every
// batch's y must be the CSV's values of its own files (the reference is the file the test writes), shuffled
// or not; and the CSV's faults are errors naming the file, line, column or image.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_targets.h>
#include <torchfit/error.h>

#include "support/error_message.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"

namespace torchfit::image_targets_test {
using data::FlowOptions;
using data::ImageDataGenerator;
using data::ImageTargetsIterator;

namespace {

// 11 PNGs root/imgs/all/NN.png; targets a = 0.5·k, b = 10 − k for file k.
void write_images(const std::filesystem::path& root) {
  for (int k = 0; k < 11; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "%02d.png", k);
    torchfit::testing::write_png(root / "imgs" / "all" / name, torchfit::testing::pattern(6, 6, k));
  }
}

std::unique_ptr<data::DirectoryIterator> images(const std::filesystem::path& root, bool shuffle) {
  return ImageDataGenerator().flow_from_directory(
      (root / "imgs").string(),
      FlowOptions().target_size({6, 6}).class_mode("none").batch_size(4).shuffle(shuffle).seed(9).verbose(false));
}

std::string config_error(const std::function<void()>& f) {
  return torchfit::testing::error_message<ConfigError>(f, "ConfigError");
}

}  // namespace

TEST(ImageTargets, EachBatchHasItsFilesRowsShuffledOrNot) {
  torchfit::testing::TempDir dir("targets");
  write_images(dir.path);
  {
    std::ofstream csv(dir.path / "t.csv");
    csv << "b,filename,a,note\n";
    for (int k = 10; k >= 0; --k) {  // another order than the folder's, paths and bare names mixed
      char name[32];
      std::snprintf(name, sizeof name, k % 2 ? "all/%02d.png" : "%02d.png", k);
      csv << 10 - k << "," << name << "," << 0.5 * k << ",x\n";
    }
    csv << "3,all/99.png,1.5,not an image of the folder\n";
  }
  for (bool shuffle : {false, true}) {
    ImageTargetsIterator it(images(dir.path, shuffle), (dir.path / "t.csv").string(), {"a", "b"});
    int64_t seen = 0;
    for (int b = 0; b < 3; ++b) {
      const data::Batch batch = it.next();
      ASSERT_EQ(batch.y.sizes().vec(), (std::vector<int64_t>{batch.size(), 2}));
      for (size_t i = 0; i < batch.indices.size(); ++i, ++seen) {
        const std::string file = it.filenames().at(static_cast<size_t>(batch.indices[i]));
        const int k = std::stoi(std::filesystem::path(file).stem().string());
        EXPECT_FLOAT_EQ(batch.y[static_cast<int64_t>(i)][0].item<float>(), 0.5f * k) << file;
        EXPECT_FLOAT_EQ(batch.y[static_cast<int64_t>(i)][1].item<float>(), 10.0f - k) << file;
      }
    }
    EXPECT_EQ(seen, 11);
  }
}

TEST(ImageTargets, FaultsOfTheCsvNameTheFileLineColumnOrImage) {
  torchfit::testing::TempDir dir("targets_bad");
  write_images(dir.path);
  const std::string csv = (dir.path / "t.csv").string();
  auto write = [&](const std::string& extra, int skip) {
    std::ofstream f(csv);
    f << "filename,a\n";
    for (int k = 0; k < 11; ++k)
      if (k != skip) f << "all/" << (k < 10 ? "0" : "") << k << ".png," << k << "\n";
    f << extra;
  };
  auto error = [&] { return config_error([&] { ImageTargetsIterator(images(dir.path, false), csv, {"a"}); }); };
  write("", 4);
  EXPECT_NE(error().find("has no row for the image 'all/04.png'"), std::string::npos) << error();
  write("all/04.png,seven\n", 4);
  EXPECT_NE(error().find("line 12, column 'a': 'seven' is not a finite number"), std::string::npos) << error();
  write("all/03.png,1\n", -1);
  EXPECT_NE(error().find("a second row for 'all/03.png'"), std::string::npos) << error();
  write("", -1);
  EXPECT_NE(config_error([&] {
              ImageTargetsIterator(images(dir.path, false), csv, {"a", "size"});
            }).find("no column 'size' (its header has: filename, a)"),
            std::string::npos);
  EXPECT_NE(config_error([&] { ImageTargetsIterator(images(dir.path, false), csv, {}); }).find("no target columns"),
            std::string::npos);
  EXPECT_THROW(ImageTargetsIterator(images(dir.path, false), (dir.path / "none.csv").string(), {"a"}), IoError);
}

}  // namespace torchfit::image_targets_test
