// Tests of DirectoryIterator / flow_from_directory: discovery, batches, determinism, threads,
// and the files people really have.
#include <gtest/gtest.h>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#if TORCHFIT_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "support/image_tree.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using namespace torchfit::data;
using torchfit::testing::make_tree;
using torchfit::testing::pattern;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;
using torchfit::testing::write_png;

namespace {

FlowOptions quiet() { return FlowOptions().verbose(false); }

std::vector<int64_t> sizes_of(BatchIterator& it, int steps) {
  std::vector<int64_t> s;
  for (int i = 0; i < steps; ++i) s.push_back(it.next().size());
  return s;
}

}  // namespace

TEST(DirectoryIteratorTest, FindsClassesSortedByCodePointAndPrintsFoundLine) {
  TempDir d;
  make_tree(d.path, {"1", "2", "10"}, 2);
  testing::internal::CaptureStdout();
  DirectoryIterator it(d.str(), FlowOptions().target_size({8, 8}));
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "Found 6 images belonging to 3 classes.\n");
  const std::map<std::string, int64_t> expected{{"1", 0}, {"10", 1}, {"2", 2}};
  EXPECT_EQ(it.class_indices(), expected);
  EXPECT_EQ(it.n(), 6);
  EXPECT_EQ(it.num_classes(), 3);
  EXPECT_EQ(it.filenames(),
            (std::vector<std::string>{"1/00.png", "1/01.png", "10/00.png", "10/01.png", "2/00.png", "2/01.png"}));
  EXPECT_EQ(it.classes(), (std::vector<int64_t>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(it.filepaths()[2], (d.path / "10/00.png").string());
}

TEST(DirectoryIteratorTest, BatchSizesAcrossPassesAre44244) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 5);
  DirectoryIterator it(d.str(), quiet().target_size({8, 8}).batch_size(4).seed(1));
  EXPECT_EQ(it.batches_per_pass(), 3);
  std::vector<int64_t> sizes;
  std::vector<std::vector<int64_t>> passes(2);
  for (int step = 0; step < 6; ++step) {
    Batch b = it.next();
    sizes.push_back(b.size());
    ASSERT_EQ(b.x.sizes(), (at::IntArrayRef{b.size(), 3, 8, 8}));
    ASSERT_EQ(b.y.sizes(), (at::IntArrayRef{b.size(), 2}));
    for (auto i : b.indices) passes[static_cast<size_t>(step / 3)].push_back(i);
  }
  EXPECT_EQ(std::vector<int64_t>(sizes.begin(), sizes.begin() + 5), (std::vector<int64_t>{4, 4, 2, 4, 4}));
  for (auto& p : passes) {
    auto sorted = p;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) << "every pass visits every sample once";
  }
  EXPECT_NE(passes[0], passes[1]) << "order is redrawn each pass";
}

TEST(DirectoryIteratorTest, UnshuffledOrderAndLabelsMatchFiles) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 3);
  auto gen = ImageDataGenerator(ImageDataGeneratorOptions().rescale(1.0 / 255));
  auto it = gen.flow_from_directory(d.str(), quiet().target_size({8, 8}).batch_size(4).shuffle(false));
  Batch b = it->next();
  EXPECT_EQ(b.indices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_TRUE(at::equal(b.y, at::tensor({1.f, 0.f, 1.f, 0.f, 1.f, 0.f, 0.f, 1.f}).view({4, 2})));
  // Pixel (row 2, col 3, channel 1) of file index 3 (class b, first file: pattern seed 3).
  const float expected = static_cast<float>((3 * 37 + 2 * 11 + 3 * 5 + 70) % 256) / 255.f;
  EXPECT_FLOAT_EQ(b.x[3][1][2][3].item<float>(), expected);
}

TEST(DirectoryIteratorTest, PureRedPngGivesOneZeroZeroAfterRescale) {
  TempDir d;
  write_png(d.path / "red" / "r.png", Image{2, 2, 3, {255, 0, 0, 255, 0, 0, 255, 0, 0, 255, 0, 0}});
  at::Tensor x;
  {
    auto it = ImageDataGenerator(ImageDataGeneratorOptions().rescale(1.0 / 255))
                  .flow_from_directory(d.str(), quiet().target_size({2, 2}).batch_size(1));
    x = it->next().x;
  }  // the iterator is gone: the tensor must own its memory
  ASSERT_EQ(x.sizes(), (at::IntArrayRef{1, 3, 2, 2}));
  EXPECT_TRUE(at::equal(x[0].select(1, 1).select(1, 0), at::tensor({1.f, 0.f, 0.f}))) << x;
  EXPECT_TRUE(at::equal(x[0][0], at::ones({2, 2})));
  EXPECT_TRUE(at::equal(x[0][2], at::zeros({2, 2})));
}

TEST(DirectoryIteratorTest, SameSeedSameBatchesForOneAndFourWorkers) {
  TempDir d;
  make_tree(d.path, {"a", "b", "c"}, 7, 12);
  ImageDataGenerator gen(article_augmentation().width_shift_range(0.1).height_shift_range(0.1).vertical_flip(true));
  auto collect = [&](int64_t workers, uint64_t seed) {
    auto it = gen.flow_from_directory(d.str(), quiet().target_size({10, 10}).batch_size(4).seed(seed).workers(workers));
    std::vector<Batch> out;
    for (int i = 0; i < 8; ++i) out.push_back(it->next());  // > 1 pass (6 batches per pass)
    return out;
  };
  const auto a = collect(1, 42), b = collect(4, 42), c = collect(1, 43);
  bool any_diff = false;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].indices, b[i].indices) << "batch " << i;
    EXPECT_TRUE(at::equal(a[i].x, b[i].x)) << "batch " << i;
    EXPECT_TRUE(at::equal(a[i].y, b[i].y)) << "batch " << i;
    if (a[i].indices != c[i].indices || !at::equal(a[i].x, c[i].x)) any_diff = true;
  }
  EXPECT_TRUE(any_diff) << "seed 43 must differ from seed 42";
  // And the augmentation really changes pixels: compare with the unaugmented batch.
  auto plain = ImageDataGenerator(ImageDataGeneratorOptions().rescale(1.0 / 255))
                   .flow_from_directory(d.str(), quiet().target_size({10, 10}).batch_size(4).seed(42));
  EXPECT_EQ(plain->next().indices, a[0].indices);
  EXPECT_FALSE(at::allclose(plain->make_batch(0, 0).x, a[0].x));
}

TEST(DirectoryIteratorTest, SkipThenNextEqualsTheSameBatchOfAFreshIterator) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 5);  // 10 images, batch 4: 3 batches per pass
  ImageDataGenerator gen(article_augmentation());
  auto flow = quiet().target_size({8, 8}).batch_size(4).seed(9).workers(2);
  auto reference = gen.flow_from_directory(d.str(), flow);
  std::vector<Batch> all;
  for (int i = 0; i < 8; ++i) all.push_back(reference->next());
  for (int k : {1, 4, 7}) {  // inside pass 0, inside pass 1, in pass 2
    auto it = gen.flow_from_directory(d.str(), flow);
    if (k > 3) it->next();  // workers already running: skip must restart them correctly
    it->skip(k > 3 ? k - 1 : k);
    const Batch b = it->next();
    EXPECT_EQ(b.indices, all[static_cast<size_t>(k)].indices) << "after skip to " << k;
    EXPECT_TRUE(at::equal(b.x, all[static_cast<size_t>(k)].x)) << "after skip to " << k;
  }
}

TEST(DirectoryIteratorTest, ResetRestartsAtPassZero) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 5);
  auto it = ImageDataGenerator(article_augmentation())
                .flow_from_directory(d.str(), quiet().target_size({8, 8}).batch_size(4).seed(7));
  const Batch first = it->next();
  it->next();
  it->next();
  it->next();
  it->reset();
  const Batch again = it->next();
  EXPECT_EQ(first.indices, again.indices);
  EXPECT_TRUE(at::equal(first.x, again.x));
}

TEST(DirectoryIteratorTest, DestroyingMidEpochJoinsWorkersPromptly) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 10, 64);
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto it = ImageDataGenerator(article_augmentation())
                  .flow_from_directory(d.str(), quiet().target_size({300, 300}).batch_size(4).workers(4).seed(3));
    // 3 epochs of 5 batches were planned; break off in the middle of the second.
    for (int i = 0; i < 7; ++i) EXPECT_GT(it->next().size(), 0);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20.0);
  const auto t1 = std::chrono::steady_clock::now();
  {
    auto it = ImageDataGenerator(article_augmentation())
                  .flow_from_directory(d.str(), quiet().target_size({300, 300}).batch_size(4).workers(4).seed(3));
    it->next();
  }  // queue filling in the background when destroyed
  const double s2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  EXPECT_LT(s2, 5.0) << "destructor must not wait for the whole prefetch queue";
}

TEST(DirectoryIteratorTest, BadFilesAreSkippedAtConstructionWithWarningCount) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 3);
  write_bytes(d.path / "a" / "zero.png", {});
  std::vector<uint8_t> png = encode_png(pattern(8, 8, 99));
  write_bytes(d.path / "a" / "half.png",
              std::vector<uint8_t>(png.begin(), png.begin() + static_cast<long>(png.size() / 2)));
  std::vector<uint8_t> jpg = encode_jpeg(pattern(8, 8, 5));
  write_bytes(d.path / "b" / "cut.jpg",
              std::vector<uint8_t>(jpg.begin(), jpg.begin() + static_cast<long>(jpg.size() / 2)));
  {
    std::ofstream f(d.path / "b" / "notes.jpg");
    f << "shopping list\n";
  }
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  DirectoryIterator it(d.str(), FlowOptions().target_size({8, 8}).batch_size(4).seed(0));
  const std::string out = testing::internal::GetCapturedStdout(), log = testing::internal::GetCapturedStderr();
  // The truncated files have intact headers: the decoder finds them (next test), not the header check.
  EXPECT_EQ(out, "Found 8 images belonging to 2 classes. Skipped 2 unreadable files.\n");  // warnings: on stderr
  EXPECT_NE(log.find("skipping unreadable image " + (d.path / "b" / "notes.jpg").string()), std::string::npos) << log;
  ASSERT_EQ(it.skipped().size(), 2u);
  EXPECT_EQ(it.skipped()[0].path, (d.path / "a" / "zero.png").string());
  EXPECT_EQ(it.skipped()[0].reason, "empty file");
  EXPECT_EQ(it.skipped()[1].path, (d.path / "b" / "notes.jpg").string());
  EXPECT_EQ(it.skipped()[1].reason, "not an image (unrecognised header)");
  EXPECT_EQ(sizes_of(it, 4), (std::vector<int64_t>{4, 4, 4, 4}));

  try {
    DirectoryIterator strict(d.str(), quiet().target_size({8, 8}).on_bad_image("error"));
    FAIL() << "no exception";
  } catch (const torchfit::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("zero.png"), std::string::npos) << e.what();
  }
}

#if TORCHFIT_HAVE_IMGCODECS  // the WebP fixture is encoded with OpenCV
TEST(DirectoryIteratorTest, WhatADecoderReadsLoadsAndTheRestIsSkippedByName) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 2);
  // a: a WebP named .jpg (OpenCV), a JPEG with a motion-photo trailer; b: a PNG whose header says
  // 14000 x 13000 (over the pixel limit), a truncated JPEG (found while decoding, replaced).
  cv::Mat webp_src(8, 8, CV_8UC3, cv::Scalar(0, 0, 255));  // BGR: pure red
  std::vector<uint8_t> webp;
  ASSERT_TRUE(cv::imencode(".webp", webp_src, webp, {cv::IMWRITE_WEBP_QUALITY, 101}));
  write_bytes(d.path / "a" / "10_photo.jpg", webp);
  std::vector<uint8_t> motion = encode_jpeg(pattern(8, 8, 3));
  motion.insert(motion.end(), 200 * 1024, 0x42);
  write_bytes(d.path / "a" / "11_motion.jpg", motion);
  std::vector<uint8_t> huge = encode_png(pattern(1, 1, 0));
  huge[16 + 2] = 0x36, huge[16 + 3] = 0xB0;  // width 14000
  huge[20 + 2] = 0x32, huge[20 + 3] = 0xC8;  // height 13000 (stb_image does not check the IHDR CRC)
  write_bytes(d.path / "b" / "10_huge.png", huge);
  const std::vector<uint8_t> jpg = encode_jpeg(pattern(8, 8, 9));
  write_bytes(d.path / "b" / "11_cut.jpg", std::vector<uint8_t>(jpg.begin(), jpg.end() - 30));

  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  DirectoryIterator it(d.str(), FlowOptions().target_size({8, 8}).batch_size(7).shuffle(false));
  const std::string out = testing::internal::GetCapturedStdout(), log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "Found 7 images belonging to 2 classes. Skipped 1 unreadable files.\n");  // the warnings are on stderr
  ASSERT_EQ(it.skipped().size(), 1u);
  EXPECT_EQ(it.skipped()[0].path, (d.path / "b" / "10_huge.png").string());
  EXPECT_EQ(it.skipped()[0].reason,
            "image too large: 14000 x 13000 = 182000000 pixels, limit 178956970 (twice max_image_pixels 89478485, as "
            "Pillow's DecompressionBombError)");
  EXPECT_NE(log.find("skipping unreadable image " + (d.path / "b" / "10_huge.png").string() + ": image too large"),
            std::string::npos)
      << log;
  EXPECT_EQ(it.filenames(), (std::vector<std::string>{"a/00.png", "a/01.png", "a/10_photo.jpg", "a/11_motion.jpg",
                                                      "b/00.png", "b/01.png", "b/11_cut.jpg"}));
  testing::internal::CaptureStderr();
  const Batch b = it.next();
  const std::string warned = testing::internal::GetCapturedStderr();
  ASSERT_EQ(b.size(), 7);
  EXPECT_FLOAT_EQ(b.x[2][0][3][3].item<float>(), 255.f) << "the WebP's red";
  EXPECT_FLOAT_EQ(b.x[2][1][3][3].item<float>(), 0.f);
  EXPECT_TRUE(at::equal(b.x[6], b.x[4])) << "b/11_cut.jpg is replaced by b/00.png";
  EXPECT_NE(warned.find("cannot decode image " + (d.path / "b" / "11_cut.jpg").string() + ": truncated JPEG"),
            std::string::npos)
      << warned;

  // 0 lifts the limit; a lower one skips every file here; a negative one is refused.
  DirectoryIterator unlimited(d.str(), quiet().target_size({8, 8}).max_image_pixels(0));
  EXPECT_EQ(unlimited.n(), 8) << "0 = no limit: 10_huge.png passes the header check";
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().max_image_pixels(31)), torchfit::IoError) << "8 x 8 = 64 > 62";
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().max_image_pixels(-1)), torchfit::ConfigError);
}
#endif

TEST(DirectoryIteratorTest, FileThatFailsOnlyWhileDecodingIsReplacedNotFatal) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 3);
  // Valid header and IEND, broken zlib stream inside IDAT: passes the header check, fails decoding.
  std::vector<uint8_t> png = encode_png(pattern(8, 8, 1));
  const std::string s(png.begin(), png.end());
  const size_t idat = s.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  png[idat + 4] = 0xFF;  // zlib CMF byte
  png[idat + 5] = 0xFF;
  write_bytes(d.path / "a" / "03_broken.png", png);
  DirectoryIterator it(d.str(), quiet().target_size({8, 8}).batch_size(7).shuffle(false));
  EXPECT_EQ(it.n(), 7);
  Batch b = it.next();
  ASSERT_EQ(b.size(), 7);
  // Sample 3 (a/03_broken.png) is replaced by the next readable file of class a, which is a/00.png.
  EXPECT_TRUE(at::equal(b.x[3], b.x[0]));
  EXPECT_EQ(b.y[3].argmax().item<int64_t>(), 0);
  EXPECT_EQ(it.next().size(), 7);

  DirectoryIterator strict(d.str(), quiet().target_size({8, 8}).batch_size(7).shuffle(false).on_bad_image("error"));
  try {
    strict.next();
    FAIL() << "no exception";
  } catch (const torchfit::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("03_broken.png"), std::string::npos) << e.what();
  }
}

TEST(DirectoryIteratorTest, GrayscaleRgbaAndPaletteFilesGiveThreeChannels) {
  TempDir d;
  write_png(d.path / "x" / "gray.png", Image{2, 2, 1, {0, 50, 100, 150}});
  write_png(d.path / "x" / "rgba.png", Image{2, 2, 4, {1, 2, 3, 0, 4, 5, 6, 255, 7, 8, 9, 9, 10, 11, 12, 128}});
  write_png(d.path / "x" / "rgb.png", pattern(3, 3, 0));
  DirectoryIterator it(d.str(), quiet().target_size({2, 2}).batch_size(3).shuffle(false).class_mode("sparse"));
  Batch b = it.next();
  ASSERT_EQ(b.x.sizes(), (at::IntArrayRef{3, 3, 2, 2}));
  EXPECT_EQ(b.y.scalar_type(), at::kLong);
  // Sorted: gray.png (0), rgb.png (1), rgba.png (2). Gray is replicated; RGBA loses its alpha and keeps
  // the colour even where alpha is 0 (PIL convert("RGB"), as Keras).
  EXPECT_TRUE(at::equal(b.x[0][0], b.x[0][2]));
  EXPECT_FLOAT_EQ(b.x[0][1][1][1].item<float>(), 150.f);
  EXPECT_FLOAT_EQ(b.x[2][2][0][0].item<float>(), 3.f);  // B of the fully transparent pixel
  EXPECT_FLOAT_EQ(b.x[2][0][1][1].item<float>(), 10.f);
  DirectoryIterator g(d.str(), quiet().target_size({2, 2}).color_mode("grayscale").class_mode("none"));
  Batch gb = g.next();
  EXPECT_EQ(gb.x.size(1), 1);
  EXPECT_FALSE(gb.y.defined());
}

// Gray files are augmented on one channel and replicated (the fast path); the same pictures stored as
// RGB files with three equal channels must give exactly the same batches, with and without
// augmentation and with a preprocessing_function / samplewise_center that see the full rgb image.
TEST(DirectoryIteratorTest, GrayFilesGiveTheSameBatchesAsTheirRgbCopies) {
  TempDir gray_dir, rgb_dir;
  for (int k = 0; k < 6; ++k) {
    Image g{9, 7, 1, std::vector<uint8_t>(63)};
    for (size_t i = 0; i < g.pixels.size(); ++i) g.pixels[i] = static_cast<uint8_t>((k * 41 + i * 13) % 256);
    Image rgb{9, 7, 3, std::vector<uint8_t>(63 * 3)};
    for (size_t i = 0; i < 63; ++i) rgb.pixels[3 * i] = rgb.pixels[3 * i + 1] = rgb.pixels[3 * i + 2] = g.pixels[i];
    const std::string cls = k % 2 ? "a" : "b", name = std::to_string(k) + ".png";
    write_png(gray_dir.path / cls / name, g);
    write_png(rgb_dir.path / cls / name, rgb);
  }
  int calls = 0;
  const std::vector<ImageDataGeneratorOptions> generators = {
      ImageDataGeneratorOptions(), article_augmentation(), article_augmentation().samplewise_center(true),
      article_augmentation().channel_shift_range(30).brightness_range(0.5, 1.5),
      article_augmentation().preprocessing_function([&calls](const at::Tensor& x) {
        ++calls;
        EXPECT_EQ(x.size(0), 3) << "preprocessing_function sees the rgb image";
        return x * at::arange(1, 4, at::kFloat).view({3, 1, 1});  // channel-dependent: must not be replicated after
      })};
  for (size_t gi = 0; gi < generators.size(); ++gi) {
    auto gen = std::make_shared<const ImageDataGenerator>(generators[gi]);
    const auto flow = quiet().target_size({15, 13}).batch_size(4).seed(3).workers(1);
    DirectoryIterator from_gray(gray_dir.str(), flow, gen), from_rgb(rgb_dir.str(), flow, gen);
    for (int step = 0; step < 3; ++step) {
      const Batch a = from_gray.next(), b = from_rgb.next();
      ASSERT_EQ(a.x.sizes(), b.x.sizes());
      EXPECT_EQ(a.x.size(1), 3);
      EXPECT_TRUE(at::allclose(a.x, b.x, 0, 1e-6))
          << "generator " << gi << " step " << step << ": max |diff| " << (a.x - b.x).abs().max().item<float>();
      EXPECT_TRUE(at::equal(a.y, b.y));
    }
  }
  EXPECT_GT(calls, 0);
}

TEST(DirectoryIteratorTest, WorkerCountOutOfRangeIsAConfigErrorNamingWorkers) {
  TempDir d;
  make_tree(d.path, {"a"}, 2);
  for (int64_t w : {int64_t{-1}, kMaxWorkers + 1}) {
    try {
      DirectoryIterator it(d.str(), quiet().workers(w));
      FAIL() << "workers " << w << " accepted";
    } catch (const torchfit::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("workers must be in [0, 1024]"), std::string::npos) << e.what();
    }
  }
}

TEST(DirectoryIteratorTest, HiddenEntriesIgnoredAndExtensionsCaseInsensitive) {
  TempDir d;
  write_png(d.path / "a" / "B.JPG.png", pattern(4, 4, 1));
  write_bytes(d.path / "a" / "B.JPG", encode_jpeg(pattern(4, 4, 2)));
  write_bytes(d.path / "a" / "c.Jpeg", encode_jpeg(pattern(4, 4, 3)));
  write_bytes(d.path / "a" / ".DS_Store", {0, 1, 2});
  write_bytes(d.path / "a" / "Thumbs.db", {0, 1, 2});
  write_bytes(d.path / "a" / "._x.jpg", {0, 5, 22, 7});
  write_bytes(d.path / "a" / "readme.txt", {'h', 'i'});
  write_png(d.path / "a" / ".ipynb_checkpoints" / "old.png", pattern(4, 4, 4));
  write_png(d.path / ".ipynb_checkpoints" / "x.png", pattern(4, 4, 5));
  write_png(d.path / "a" / "sub" / "deep.PNG", pattern(4, 4, 6));
  DirectoryIterator it(d.str(), quiet().target_size({4, 4}));
  EXPECT_EQ(it.num_classes(), 1);
  EXPECT_EQ(it.filenames(), (std::vector<std::string>{"a/B.JPG", "a/B.JPG.png", "a/c.Jpeg", "a/sub/deep.PNG"}));
  EXPECT_TRUE(it.skipped().empty());
}

TEST(DirectoryIteratorTest, EmptyClassStaysAClassAndNoImagesIsAnError) {
  TempDir d;
  make_tree(d.path, {"a", "c"}, 2);
  fs::create_directories(d.path / "b");
  DirectoryIterator it(d.str(), quiet().target_size({8, 8}));
  EXPECT_EQ(it.class_indices(), (std::map<std::string, int64_t>{{"a", 0}, {"b", 1}, {"c", 2}}));
  EXPECT_EQ(it.n(), 4);
  EXPECT_EQ(it.next().y.size(1), 3);

  TempDir empty;
  fs::create_directories(empty.path / "x");
  try {
    DirectoryIterator none(empty.str(), quiet());
    FAIL() << "no exception";
  } catch (const torchfit::IoError& e) {
    EXPECT_NE(std::string(e.what()).find(empty.str()), std::string::npos) << e.what();
  }
  EXPECT_THROW(DirectoryIterator(empty.str() + "/missing", quiet()), torchfit::IoError);
}

TEST(DirectoryIteratorTest, TestIteratorTakesTrainingClassIndices) {
  TempDir train, test;
  make_tree(train.path, {"cat", "dog", "eel"}, 2);
  make_tree(test.path, {"dog", "eel"}, 1);
  DirectoryIterator tr(train.str(), quiet().target_size({8, 8}));
  DirectoryIterator te(test.str(), quiet().target_size({8, 8}).shuffle(false).class_indices(tr.class_indices()));
  EXPECT_EQ(te.class_indices(), tr.class_indices());
  EXPECT_EQ(te.classes(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(te.next().y.size(1), 3);

  make_tree(test.path, {"fox"}, 1);
  try {
    DirectoryIterator bad(test.str(), quiet().target_size({8, 8}).class_indices(tr.class_indices()));
    FAIL() << "no exception";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"fox\""), std::string::npos) << e.what();
  }
  // An explicit class list keeps its order and ignores other folders (Keras).
  DirectoryIterator listed(test.str(), quiet().target_size({8, 8}).classes({"fox", "dog"}));
  EXPECT_EQ(listed.class_indices(), (std::map<std::string, int64_t>{{"fox", 0}, {"dog", 1}}));
  EXPECT_EQ(listed.n(), 2);
}

TEST(DirectoryIteratorTest, ValidationSplitTakesFirstFilesAndIsNotAugmented) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 10);
  ImageDataGenerator gen(article_augmentation().validation_split(0.25));
  auto val = gen.flow_from_directory(d.str(), quiet().target_size({8, 8}).subset("validation").shuffle(false).seed(1));
  auto tr = gen.flow_from_directory(d.str(), quiet().target_size({8, 8}).subset("training").seed(1));
  EXPECT_EQ(val->filenames(), (std::vector<std::string>{"a/00.png", "a/01.png", "b/00.png", "b/01.png"}));
  EXPECT_EQ(tr->n(), 16);
  EXPECT_EQ(tr->filenames()[0], "a/02.png");
  EXPECT_FALSE(val->augmenting());
  EXPECT_TRUE(tr->augmenting());
  // Validation samples are exactly the rescaled files.
  Batch b = val->next();
  const float expected = static_cast<float>((1 * 37 + 4 * 11 + 5 * 5 + 2 * 70) % 256) / 255.f;  // a/01.png, (4,5), blue
  EXPECT_FLOAT_EQ(b.x[1][2][4][5].item<float>(), expected);
  EXPECT_THROW(ImageDataGenerator().flow_from_directory(d.str(), quiet().subset("validation")), torchfit::ConfigError);
}

TEST(DirectoryIteratorTest, ClassModes) {
  TempDir d;
  make_tree(d.path, {"neg", "pos"}, 2);
  auto b = DirectoryIterator(d.str(), quiet().target_size({8, 8}).shuffle(false).class_mode("binary")).next();
  ASSERT_EQ(b.y.sizes(), (at::IntArrayRef{4, 1}));
  EXPECT_TRUE(at::equal(b.y.flatten(), at::tensor({0.f, 0.f, 1.f, 1.f})));
  auto s = DirectoryIterator(d.str(), quiet().target_size({8, 8}).shuffle(false).class_mode("sparse")).next();
  EXPECT_TRUE(at::equal(s.y, at::tensor({0, 0, 1, 1}, at::kLong)));
  auto in = DirectoryIterator(d.str(), quiet().target_size({8, 8}).class_mode("input")).next();
  EXPECT_TRUE(at::equal(in.x, in.y));
  make_tree(d.path, {"third"}, 1);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().class_mode("binary")), torchfit::ConfigError);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().class_mode("multi")), torchfit::ConfigError);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().color_mode("cmyk")), torchfit::ConfigError);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().interpolation("cubic")), torchfit::ConfigError);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().on_bad_image("ignore")), torchfit::ConfigError);
  EXPECT_THROW(DirectoryIterator(d.str(), quiet().batch_size(0)), torchfit::ConfigError);
}

TEST(DirectoryIteratorTest, ResizesWithNearestByDefault) {
  TempDir d;
  write_png(d.path / "a" / "x.png", Image{1, 2, 1, {10, 200}});
  auto b = DirectoryIterator(d.str(), quiet().target_size({1, 4}).color_mode("grayscale")).next();
  EXPECT_TRUE(at::equal(b.x.flatten(), at::tensor({10.f, 10.f, 200.f, 200.f})));
  auto bl =
      DirectoryIterator(d.str(), quiet().target_size({1, 4}).color_mode("grayscale").interpolation("bilinear")).next();
  // Bilinear with pixel centres: 10, 57.5, 152.5, 200 (rounded to 8 bits like PIL's resize).
  EXPECT_TRUE(at::allclose(bl.x.flatten(), at::tensor({10.f, 57.5f, 152.5f, 200.f}), 0, 0.51)) << bl.x;
}

TEST(DirectoryIteratorTest, WaitMsIsMeasured) {
  TempDir d;
  make_tree(d.path, {"a"}, 4, 32);
  auto it = ImageDataGenerator(article_augmentation())
                .flow_from_directory(d.str(), quiet().target_size({200, 200}).batch_size(2).workers(1));
  const Batch b = it->next();  // the first batch must be waited for
  EXPECT_GT(b.wait_ms, 0.0);
}
