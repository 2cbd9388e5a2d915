// Tests of the image-folder listing (image_folder.h) against Keras's rules (KERAS_SEMANTICS.md,
// keras-preprocessing 1.1's DirectoryIterator): class order, the sorted walk, extensions, hidden
// entries, the validation split, class lists and maps, the header check; and, where Debian's
// keras-preprocessing is installed, against its own DirectoryIterator on the same tree.
#include <gtest/gtest.h>

#include <torchfit/data/image_folder.h>
#include <torchfit/error.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/image_tree.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace torchfit::data;
using torchfit::testing::pattern;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;
using torchfit::testing::write_png;

namespace image_folder_test {

using Names = std::vector<std::string>;

// A valid 2×2 PNG at root/rel (the content differs per call; the names are what the tests look at).
void image_at(const fs::path& root, const std::string& rel) {
  static int k = 0;
  write_png(root / rel, pattern(2, 2, k++));
}

void images_at(const fs::path& root, const Names& rels) {
  for (const auto& r : rels) image_at(root, r);
}

// `n` images root/<cls>/000.png … in name order.
void class_of(const fs::path& root, const std::string& cls, int n) {
  for (int i = 0; i < n; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "%03d.png", i);
    image_at(root, cls + "/" + name);
  }
}

// The tree of the Keras-rule tests: classes whose code-point order is not the "natural" one, files
// whose sorted order puts digits before capitals before lower case, and folders whose sorted path
// order ("a/sub" < "a/sub-x" < "a/sub/deeper", as Keras's sorted(os.walk)) is not the depth-first one.
void keras_rule_tree(const fs::path& root) {
  images_at(root, {"a/b.png", "a/B.jpg", "a/10.jpeg", "a/2.PNG", "a/sub/x.bmp", "a/sub/deeper/z.ppm", "a/sub-x/y.tif",
                   "a/Sub/w.tiff", "10/k.png", "2/k.png", "1/k.png", "B/k.png", "_u/k.png"});
}

}  // namespace image_folder_test

using namespace image_folder_test;

TEST(ImageFolder, ClassesAreSubFoldersSortedByCodePoint) {
  TempDir d;
  keras_rule_tree(d.path);
  image_at(d.path, "top_level_file.png");  // a file is not a class
  image_at(d.path, ".hidden/k.png");
  image_at(d.path, "__MACOSX/a/._b.png");
  EXPECT_EQ(list_image_classes(d.str(), {}), (Names{"1", "10", "2", "B", "_u", "a"}));
}

TEST(ImageFolder, FilesFollowKerasSortedWalkClassByClass) {
  TempDir d;
  keras_rule_tree(d.path);
  const ImageFolderListing l = list_image_folder(d.str(), {});
  EXPECT_EQ(l.class_names, (Names{"1", "10", "2", "B", "_u", "a"}));
  EXPECT_EQ(l.filenames, (Names{"1/k.png", "10/k.png", "2/k.png", "B/k.png", "_u/k.png",
                                // class a: its own files sorted, then the folders in sorted path order
                                "a/10.jpeg", "a/2.PNG", "a/B.jpg", "a/b.png", "a/Sub/w.tiff", "a/sub/x.bmp",
                                "a/sub-x/y.tif", "a/sub/deeper/z.ppm"}));
  EXPECT_EQ(l.classes, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5}));
  ASSERT_EQ(l.filepaths.size(), l.filenames.size());
  EXPECT_EQ(l.filepaths[5], (d.path / "a/10.jpeg").string());
  EXPECT_TRUE(l.skipped.empty());
  EXPECT_EQ(l.class_indices(), (ClassIndices{{"1", 0}, {"10", 1}, {"2", 2}, {"B", 3}, {"_u", 4}, {"a", 5}}));
  EXPECT_EQ(l.samples_of_class()[5], (std::vector<int64_t>{5, 6, 7, 8, 9, 10, 11, 12}));
}

TEST(ImageFolder, ExtensionsNeedTheDotAnyCaseAndHiddenEntriesAreIgnored) {
  TempDir d;
  images_at(d.path, {"c/x.PNG", "c/x.Jpg", "c/x.jpeg", "c/x.bmp", "c/x.ppm", "c/x.TIF", "c/x.tiff"});
  // Not collected: other formats (Keras's white list has no webp or gif), no dot, hidden names.
  images_at(d.path, {"c/x.webp", "c/x.gif", "c/xpng", "c/.png", "c/.hidden.png", "c/._x.png",
                     "c/.ipynb_checkpoints/y.png", "c/__MACOSX/z.png", "c/x.png.txt"});
  write_bytes(d.path / "c" / ".DS_Store", {0, 1, 2});
  write_bytes(d.path / "c" / "Thumbs.db", {0, 1, 2});
  const ImageFolderListing l = list_image_folder(d.str(), {});
  EXPECT_EQ(l.filenames, (Names{"c/x.Jpg", "c/x.PNG", "c/x.TIF", "c/x.bmp", "c/x.jpeg", "c/x.ppm", "c/x.tiff"}));
  EXPECT_TRUE(l.skipped.empty());

  EXPECT_TRUE(is_image_file_name("a.JPEG"));
  EXPECT_TRUE(is_image_file_name("archive.tar.png"));
  EXPECT_FALSE(is_image_file_name("png"));
  EXPECT_FALSE(is_image_file_name("apng"));
  EXPECT_FALSE(is_image_file_name(".png"));
  EXPECT_FALSE(is_image_file_name("._cat.jpg"));
  EXPECT_FALSE(is_image_file_name("cat.webp"));
  EXPECT_FALSE(is_image_file_name(""));
  EXPECT_TRUE(is_hidden_entry("__MACOSX"));
  EXPECT_TRUE(is_hidden_entry(".git"));
  EXPECT_FALSE(is_hidden_entry("_MACOSX"));
}

TEST(ImageFolder, ValidationSplitIsTheFirstIntOfVTimesNSortedFilesPerClass) {
  TempDir d;
  class_of(d.path, "a", 50);
  class_of(d.path, "b", 3);
  class_of(d.path, "c", 10);
  // Python's int(v * n) on doubles: 0.58 * 50 = 28.999999999999996 → 28; 0.58 * 3 = 1.74 → 1;
  // 0.58 * 10 = 5.8 → 5.
  const auto opts = [](const std::string& subset) {
    return ImageFolderOptions().validation_split(0.58).subset(subset).workers(1);
  };
  const ImageFolderListing val = list_image_folder(d.str(), opts("validation"));
  const ImageFolderListing train = list_image_folder(d.str(), opts("training"));
  const ImageFolderListing all = list_image_folder(d.str(), ImageFolderOptions().validation_split(0.58));
  auto count = [](const ImageFolderListing& l, int64_t c) { return std::count(l.classes.begin(), l.classes.end(), c); };
  EXPECT_EQ(count(val, 0), 28);
  EXPECT_EQ(count(val, 1), 1);
  EXPECT_EQ(count(val, 2), 5);
  EXPECT_EQ(count(train, 0), 22);
  EXPECT_EQ(count(train, 1), 2);
  EXPECT_EQ(count(train, 2), 5);
  EXPECT_EQ(val.filenames.front(), "a/000.png");
  EXPECT_EQ(val.filenames[27], "a/027.png");
  EXPECT_EQ(train.filenames.front(), "a/028.png");
  EXPECT_EQ(val.filenames[28], "b/000.png");
  EXPECT_EQ(train.filenames[22], "b/001.png");
  EXPECT_EQ(all.filenames.size(), 63u) << "no subset: every file";
  Names joined = val.filenames;  // validation then training, class by class, is every file once
  joined.insert(joined.end(), train.filenames.begin(), train.filenames.end());
  std::sort(joined.begin(), joined.end());
  EXPECT_EQ(joined, all.filenames);
}

TEST(ImageFolder, TheSplitIsCountedBeforeTheHeaderCheckAndBadFilesAreReturnedWithReasons) {
  TempDir d;
  class_of(d.path, "a", 4);
  write_bytes(d.path / "a" / "000.png", {});  // empty: fails the header check
  write_bytes(d.path / "a" / "003.png", {'n', 'o', 't'});
  const ImageFolderListing val =
      list_image_folder(d.str(), ImageFolderOptions().validation_split(0.5).subset("validation"));
  // Validation = the first int(0.5·4) = 2 files, 000 (bad) and 001: the bad file does not pull 002 in.
  EXPECT_EQ(val.filenames, (Names{"a/001.png"}));
  ASSERT_EQ(val.skipped.size(), 1u);
  EXPECT_EQ(val.skipped[0].path, (d.path / "a/000.png").string());
  EXPECT_FALSE(val.skipped[0].reason.empty());
  const ImageFolderListing train =
      list_image_folder(d.str(), ImageFolderOptions().validation_split(0.5).subset("training"));
  EXPECT_EQ(train.filenames, (Names{"a/002.png"}));
  ASSERT_EQ(train.skipped.size(), 1u);
  EXPECT_EQ(train.skipped[0].path, (d.path / "a/003.png").string());

  EXPECT_NO_THROW(report_skipped_files(train, "skip"));
  try {
    report_skipped_files(train, "error");
    FAIL() << "expected IoError";
  } catch (const torchfit::IoError& e) {
    EXPECT_EQ(std::string(e.what()), "unreadable image " + train.skipped[0].path + ": " + train.skipped[0].reason);
  }
  EXPECT_THROW(report_skipped_files(train, "ignore"), torchfit::ConfigError);
  EXPECT_TRUE(skips_bad_images("skip"));
  EXPECT_FALSE(skips_bad_images("error"));
}

TEST(ImageFolder, AClassListKeepsItsOrderAndAMapGivesTheIndices) {
  TempDir d;
  class_of(d.path, "cat", 1);
  class_of(d.path, "dog", 2);
  class_of(d.path, "eel", 1);
  const ImageFolderListing l = list_image_folder(d.str(), ImageFolderOptions().classes({"dog", "cat", "yak"}));
  EXPECT_EQ(l.class_names, (Names{"dog", "cat", "yak"})) << "given order; eel/ ignored; yak without a folder";
  EXPECT_EQ(l.filenames, (Names{"dog/000.png", "dog/001.png", "cat/000.png"}));
  EXPECT_EQ(l.classes, (std::vector<int64_t>{0, 0, 1}));
  EXPECT_THROW(list_image_classes(d.str(), ImageFolderOptions().classes({"cat", "cat"})), torchfit::ConfigError);

  const ClassIndices train{{"cat", 2}, {"dog", 0}, {"eel", 1}, {"fox", 3}};
  const ImageFolderListing m = list_image_folder(d.str(), ImageFolderOptions().class_indices(train));
  EXPECT_EQ(m.class_names, (Names{"dog", "eel", "cat", "fox"}));
  EXPECT_EQ(m.classes, (std::vector<int64_t>{0, 0, 1, 2}));
  try {
    list_image_classes(d.str(), ImageFolderOptions().class_indices({{"cat", 0}, {"dog", 1}}));
    FAIL() << "eel/ is not in the map";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("folder \"eel\""), std::string::npos) << e.what();
  }
  EXPECT_THROW(list_image_classes(
                   d.str(), ImageFolderOptions().class_indices({{"cat", 0}, {"dog", 2}, {"eel", 3}})),  // a gap at 1
               torchfit::ConfigError);
}

TEST(ImageFolder, LinkedFoldersOnlyWithFollowLinksAndEachFolderOnce) {
  TempDir d, outside;
  class_of(outside.path, "more", 2);
  class_of(d.path, "a", 1);
  fs::create_directory_symlink(outside.path / "more", d.path / "a" / "linked");
  fs::create_directory_symlink(d.path / "a", d.path / "a" / "loop");  // a link back to the class folder
  EXPECT_EQ(list_image_folder(d.str(), {}).filenames, (Names{"a/000.png"}));
  EXPECT_EQ(list_image_folder(d.str(), ImageFolderOptions().follow_links(true)).filenames,
            (Names{"a/000.png", "a/linked/000.png", "a/linked/001.png"}));
}

TEST(ImageFolder, BadArgumentsAreErrorsNamingThem) {
  TempDir d;
  class_of(d.path, "a", 1);
  auto message = [&](const ImageFolderOptions& o) {
    try {
      list_image_folder(d.str(), o);
    } catch (const torchfit::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(ImageFolderOptions().validation_split(1.0)).find("validation_split"), std::string::npos);
  EXPECT_NE(message(ImageFolderOptions().validation_split(-0.1)).find("validation_split"), std::string::npos);
  EXPECT_NE(message(ImageFolderOptions().subset("test")).find("subset"), std::string::npos);
  EXPECT_NE(message(ImageFolderOptions().subset("training")).find("needs validation_split"), std::string::npos);
  EXPECT_NE(message(ImageFolderOptions().max_image_pixels(-1)).find("max_image_pixels"), std::string::npos);
  EXPECT_NE(message(ImageFolderOptions().workers(-1)).find("workers"), std::string::npos);
  try {
    list_image_folder((d.path / "missing").string(), {});
    FAIL() << "expected IoError";
  } catch (const torchfit::IoError& e) {
    EXPECT_EQ(std::string(e.what()), "image directory not found (or not a folder): " + (d.path / "missing").string());
  }
  EXPECT_THROW(list_image_folder((d.path / "a" / "000.png").string(), {}), torchfit::IoError);
  const ImageFolderListing empty = list_image_folder(d.str(), ImageFolderOptions().classes({"none"}));
  EXPECT_TRUE(empty.filenames.empty()) << "an empty result is the caller's to judge";
  EXPECT_EQ(empty.class_names, (Names{"none"}));
}

// The same tree through Debian's keras-preprocessing (flow_from_directory with shuffle=False): the
// class map, the file list and the classes of every subset are Keras's own. (Only names Keras and
// torchfit treat alike: no hidden entries, every extension with its dot.)
TEST(ImageFolder, ListsWhatKerasPreprocessingListsOnTheSameTree) {
  TempDir d;
  keras_rule_tree(d.path);
  class_of(d.path, "m", 50);
  const nlohmann::json input{{"dir", d.str()}};
  const auto ref = torchfit::testing::run_python({"keras_preprocessing.image"}, R"(
from keras_preprocessing.image import ImageDataGenerator
out = {}
for subset in ["", "training", "validation"]:
    gen = ImageDataGenerator(validation_split=0.58)
    it = gen.flow_from_directory(data["dir"], subset=subset or None, shuffle=False, target_size=(2, 2))
    out[subset] = {"filenames": [f.replace("\\", "/") for f in it.filenames],
                   "classes": [int(c) for c in it.classes], "class_indices": it.class_indices}
)",
                                                 input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (const std::string subset : {"", "training", "validation"}) {
    const ImageFolderListing l = list_image_folder(d.str(), ImageFolderOptions().validation_split(0.58).subset(subset));
    const auto& k = ref.out[subset];
    EXPECT_EQ(l.filenames, k["filenames"].get<Names>()) << "subset '" << subset << "'";
    EXPECT_EQ(l.classes, k["classes"].get<std::vector<int64_t>>()) << "subset '" << subset << "'";
    EXPECT_EQ(l.class_indices(), k["class_indices"].get<ClassIndices>()) << "subset '" << subset << "'";
  }
}
