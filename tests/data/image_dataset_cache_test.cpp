// Tests of image_dataset_from_directory's cache (ImageDatasetOptions::cache, Keras's dataset.cache()) and
// 16-bit policy (sixteen_bit): batches identical with and without the cache over two shuffled passes (a
// generated folder and the real Fashion-MNIST data/train), the cached pass's pixels against the NumPy
// reference of Keras 3's resize (tests/data/reference/image_dataset_reference.py), the budget, bad
// options, and 16-bit PNGs against flow_from_directory and Pillow's frozen pixels (tests/data/golden/).
#include <gtest/gtest.h>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_dataset.h>
#include <torchfit/error.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "support/golden.h"
#include "support/image_tree.h"
#include "support/npy.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace image_dataset_cache_test {

namespace fs = std::filesystem;
using namespace torchfit::data;
using nlohmann::json;
using torchfit::testing::golden_file;
using torchfit::testing::TempDir;

const Size2 kSize{7, 6};

// Colour PNGs of several sizes (one at kSize: its resized values are whole numbers, cached as bytes) and
// gray ones, in three classes: 15 + 4 + 1 = 20 files.
void make_mixed_tree(const fs::path& root) {
  torchfit::testing::make_tree(root, {"a", "b", "c"}, 5, 11);
  for (int k = 0; k < 4; ++k) {
    Image g{9 + k, 5, 1, std::vector<uint8_t>(static_cast<size_t>((9 + k) * 5))};
    for (size_t i = 0; i < g.pixels.size(); ++i) g.pixels[i] = static_cast<uint8_t>((k * 41 + i * 13) % 256);
    torchfit::testing::write_png(root / (k % 2 ? "a" : "c") / ("gray" + std::to_string(k) + ".png"), g);
  }
  torchfit::testing::write_png(root / "b" / "at_size.png", torchfit::testing::pattern(7, 6, 99));
}

ImageDatasetOptions shuffled() {
  return ImageDatasetOptions().verbose(false).image_size(kSize).batch_size(3).seed(17).label_mode("categorical");
}

// Every batch of passes 0 and 1, built on the calling thread.
std::vector<Batch> two_passes(ImageDataset& ds) {
  std::vector<Batch> out;
  for (int64_t pass = 0; pass < 2; ++pass)
    for (int64_t b = 0; b < ds.batches_per_pass(); ++b) out.push_back(ds.make_batch(pass, b));
  return out;
}

std::vector<Batch> take(ImageDataset& ds, int64_t n) {
  std::vector<Batch> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(ds.next());
  return out;
}

void expect_same_batches(const std::vector<Batch>& a, const std::vector<Batch>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].indices, b[i].indices) << what << " batch " << i;
    ASSERT_EQ(a[i].x.sizes(), b[i].x.sizes()) << what << " batch " << i;
    EXPECT_TRUE(at::equal(a[i].x, b[i].x))
        << what << " batch " << i << ": max |diff| " << (a[i].x - b[i].x).abs().max().item<float>();
    EXPECT_TRUE(at::equal(a[i].y, b[i].y)) << what << " batch " << i;
  }
}

// The reference's pixels of `files` (indices into the dataset's file list) resized to `size` by
// TensorFlow's bilinear rule, rgb, as (H, W, C) lists; its file list must be the dataset's.
torchfit::testing::PythonResult reference_pixels(const std::string& dir, const ImageDatasetOptions& o,
                                                 const std::vector<int64_t>& files) {
  json in = {{"directory", dir},
             {"shuffle", true},
             {"seed", *o.seed()},
             {"image_size", {o.image_size()[0], o.image_size()[1]}},
             {"interpolation", "bilinear"},
             {"color_mode", "rgb"},
             {"labels", "inferred"},
             {"class_names", nullptr},
             {"pixel_indices", files},
             {"tf_resize_dir", std::string(TORCHFIT_SOURCE_DIR) + "/tests/layers/reference"}};
  if (o.validation_split() != 0) in["validation_split"] = o.validation_split(), in["subset"] = o.subset();
  const std::string script = std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/reference/image_dataset_reference.py";
  return torchfit::testing::run_python({"numpy", "PIL"}, "exec(open(" + json(script).dump() + ").read())", in);
}

// Max |x − reference| of batch `b` (x (N, C, H, W)) against the reference's (H, W, C) lists.
double max_error(const Batch& b, const json& pixels) {
  double worst = 0;
  EXPECT_EQ(pixels.size(), static_cast<size_t>(b.size()));
  for (size_t n = 0; n < pixels.size(); ++n) {
    const at::Tensor hwc = b.x[static_cast<int64_t>(n)].permute({1, 2, 0}).contiguous().to(at::kDouble);
    const double* p = hwc.data_ptr<double>();
    for (size_t i = 0; i < pixels[n].size(); ++i) worst = std::max(worst, std::abs(p[i] - pixels[n][i].get<double>()));
  }
  return worst;
}

// Bytes the cache holds for `ds` fully cached: 1 per value of a file already at the image size (its
// values are whole numbers), 4 per value of every other (float32).
int64_t expected_cache_bytes(const ImageDataset& ds) {
  const int64_t values = 3 * ds.options().image_size()[0] * ds.options().image_size()[1];
  int64_t bytes = 0;
  for (const auto& path : ds.file_paths()) {
    const Image img = load_image(path);
    const bool at_size = img.height == ds.options().image_size()[0] && img.width == ds.options().image_size()[1];
    bytes += at_size ? values : 4 * values;
  }
  return bytes;
}

template <typename E, typename F>
void expect_error(F&& f, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << text;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), text);
  }
}

// Two shuffled passes (different orders) with and without the cache: the same batches, built on the
// calling thread and through the workers (1 and 3); after the first pass every sample is cached (the
// file at the image size as bytes), and the second pass reads the cache only — the files are deleted
// before it. The cached pass's pixels equal the NumPy reference of TensorFlow's resize.
TEST(ImageDatasetFromDirectory, CacheGivesTheSameBatchesOverTwoShuffledPasses) {
  TempDir d;
  make_mixed_tree(d.path / "tree");
  const std::string root = (d.path / "tree").string();
  auto plain = image_dataset_from_directory(root, shuffled().workers(1));
  const std::vector<Batch> expected = two_passes(*plain);
  const int64_t per_pass = plain->batches_per_pass();  // 20 files: 7 batches
  ASSERT_EQ(per_pass, 7);
  EXPECT_NE(expected[0].indices, expected[static_cast<size_t>(per_pass)].indices) << "each pass its own order";
  for (int64_t workers : {1, 3}) {
    auto cached = image_dataset_from_directory(root, shuffled().workers(workers).cache(true));
    expect_same_batches(take(*cached, 2 * per_pass), expected, "next(), workers " + std::to_string(workers));
  }
  EXPECT_EQ(plain->cached_samples(), 0);
  auto cached = image_dataset_from_directory(root, shuffled().workers(1).cache(true));
  std::vector<Batch> got;
  for (int64_t b = 0; b < per_pass; ++b) got.push_back(cached->make_batch(0, b));
  EXPECT_EQ(cached->cached_samples(), 20);
  EXPECT_EQ(cached->cache_bytes(), expected_cache_bytes(*cached));  // 19 · 126 · 4 + 126
  EXPECT_EQ(cached->cache_bytes(), 19 * 126 * 4 + 126);
  auto r = reference_pixels(root, shuffled(), expected[static_cast<size_t>(per_pass)].indices);
  fs::remove_all(root);  // the second pass can only come from the cache
  for (int64_t b = 0; b < per_pass; ++b) got.push_back(cached->make_batch(1, b));
  expect_same_batches(got, expected, "make_batch, files deleted after pass 0");
  TORCHFIT_REQUIRE_PYTHON(r);
  EXPECT_LE(max_error(got[static_cast<size_t>(per_pass)], r.out["pixels"]), 1e-4);
  EXPECT_EQ(cached->stream_config(), plain->stream_config()) << "the cache does not change the stream";
}

// A budget of three samples: exactly the first three loaded are cached, one warning names the option and
// the budget, the others are decoded on every pass, and the batches are still the uncached ones.
TEST(ImageDatasetFromDirectory, CacheOverBudgetCachesPartAndKeepsTheBatches) {
  TempDir d;
  make_mixed_tree(d.path / "tree");
  const std::string root = (d.path / "tree").string();
  const auto o = shuffled().image_size({6, 7}).workers(1);  // no file is 6 × 7: every sample is float32
  auto plain = image_dataset_from_directory(root, o);
  const std::vector<Batch> expected = two_passes(*plain);
  const int64_t sample = 3 * 6 * 7 * 4, budget = 3 * sample + 100;
  auto cached = image_dataset_from_directory(root, ImageDatasetOptions(o).cache(true).cache_max_bytes(budget));
  ::testing::internal::CaptureStderr();
  const std::vector<Batch> got = two_passes(*cached);
  const std::string err = ::testing::internal::GetCapturedStderr();
  expect_same_batches(got, expected, "budget of 3 samples");
  EXPECT_EQ(cached->cached_samples(), 3);
  EXPECT_EQ(cached->cache_bytes(), 3 * sample);
  EXPECT_NE(err.find("cache of " + root + ": budget ImageDatasetOptions::cache_max_bytes " + std::to_string(budget) +
                     " (0.0 MiB) reached with 3 of 20 samples cached"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("cache_max_bytes", err.find("cache_max_bytes") + 1), std::string::npos) << "once: " << err;
}

// The real Fashion-MNIST folder: 1,200 files (a 2 % validation subset), two shuffled passes with and
// without the cache at 40 × 33 (float32 samples) and at 28 × 28 (the files' size: bytes); the cached
// second pass's first batch against the NumPy reference.
TEST(ImageDatasetFromDirectory, CacheGivesTheSameBatchesOnFashionMnist) {
  const std::string root = std::string(TORCHFIT_SOURCE_DIR) + "/data/train";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is absent (scripts/prepare_data.sh writes it)";
  for (const Size2 size : {Size2{40, 33}, Size2{28, 28}}) {
    SCOPED_TRACE(std::to_string(size[0]) + "x" + std::to_string(size[1]));
    const auto o = ImageDatasetOptions()
                       .verbose(false)
                       .seed(123)
                       .validation_split(0.02)
                       .subset("validation")
                       .image_size(size)
                       .batch_size(32)
                       .workers(2)
                       .label_mode("categorical");
    auto plain = image_dataset_from_directory(root, o);
    auto cached = image_dataset_from_directory(root, ImageDatasetOptions(o).cache(true));
    ASSERT_EQ(plain->samples(), 1200);
    const int64_t per_pass = plain->batches_per_pass();
    const std::vector<Batch> expected = take(*plain, 2 * per_pass), got = take(*cached, 2 * per_pass);
    expect_same_batches(got, expected, "Fashion-MNIST");
    EXPECT_EQ(cached->cached_samples(), 1200);
    const int64_t values = 3 * size[0] * size[1];
    if (size[0] == 28) EXPECT_EQ(cached->cache_bytes(), 1200 * values) << "whole numbers: one byte each";
    if (size[0] == 40) EXPECT_EQ(cached->cache_bytes(), 1200 * values * 4) << "float32";
    const Batch& second = got[static_cast<size_t>(per_pass)];
    auto r = reference_pixels(root, o, second.indices);
    TORCHFIT_REQUIRE_PYTHON(r);
    EXPECT_LE(max_error(second, r.out["pixels"]), 1e-4);
  }
}

// A 16-bit gray and a 16-bit colour PNG (8 × 40; gray row 0 holds 0, 7, 14, … 273) read at their own
// size under each policy and colour mode, with and without the cache: x equals flow_from_directory's for
// the same file and options, and the independent values — Pillow's pixels frozen by keras-preprocessing
// (tests/data/golden/png16_*.npy) for "pillow" and the colour file, row 0's 7·j >> 8 for "high_byte".
TEST(ImageDatasetFromDirectory, SixteenBitPolicyEqualsFlowFromDirectorys) {
  TempDir d;
  fs::create_directories(d.path / "a");
  fs::create_directories(d.path / "b");
  fs::copy_file(golden_file("png16_gray.png"), d.path / "a" / "g.png");
  fs::copy_file(golden_file("png16_rgb.png"), d.path / "b" / "c.png");
  for (const std::string policy : {"high_byte", "pillow"})
    for (const std::string mode : {"rgb", "grayscale"})
      for (const bool cache : {false, true}) {
        SCOPED_TRACE(policy + " " + mode + (cache ? " cached" : ""));
        auto ds = image_dataset_from_directory(d.str(), ImageDatasetOptions()
                                                            .verbose(false)
                                                            .shuffle(false)
                                                            .image_size({8, 40})
                                                            .color_mode(mode)
                                                            .sixteen_bit(policy)
                                                            .cache(cache));
        DirectoryIterator flow(
            d.str(),
            FlowOptions().verbose(false).shuffle(false).target_size({8, 40}).color_mode(mode).sixteen_bit(policy));
        ds->make_batch(0, 0);
        const at::Tensor x = ds->make_batch(1, 0).x;  // the cached values when cached
        ASSERT_EQ(ds->file_paths()[0], (d.path / "a" / "g.png").string());
        EXPECT_TRUE(at::equal(x, flow.make_batch(0, 0).x));
        const int64_t c = mode == "rgb" ? 3 : 1;
        for (int64_t j = 0; j < 40; ++j) {
          const int v = policy == "pillow" ? std::min<int>(7 * j, 255) : (7 * j) >> 8;
          EXPECT_EQ(x[0][c - 1][0][j].item<float>(), static_cast<float>(v)) << "gray row 0, column " << j;
        }
        std::vector<std::pair<std::string, int64_t>> files;  // golden array, sample
        if (mode == "rgb") files.push_back({"png16_rgb_rgb.npy", 1});
        if (policy == "pillow") files.push_back({"png16_gray_" + mode + ".npy", 0});
        for (const auto& [name, sample] : files) {
          const auto a = torchfit::testing::read_npy(golden_file(name));
          const at::Tensor want = at::tensor(a.values<uint8_t>()).to(at::kFloat).reshape(a.shape).permute({2, 0, 1});
          EXPECT_TRUE(at::equal(x[sample], want)) << name;
        }
        EXPECT_EQ(ds->stream_config().at("sixteen_bit"), policy);
      }
}

// Bad cache_max_bytes (with the cache on or off) and sixteen_bit values: ConfigErrors naming them.
TEST(ImageDatasetFromDirectory, BadCacheAndSixteenBitOptionsAreErrors) {
  TempDir d;
  make_mixed_tree(d.path / "tree");
  const std::string root = (d.path / "tree").string();
  using torchfit::ConfigError;
  for (const int64_t bad : {int64_t{0}, int64_t{-1}})
    for (const bool cache : {true, false})
      expect_error<ConfigError>(
          [&] { image_dataset_from_directory(root, shuffled().cache(cache).cache_max_bytes(bad)); },
          "cache_max_bytes must be >= 1 (bytes of cached image data), got " + std::to_string(bad));
  expect_error<ConfigError>([&] { image_dataset_from_directory(root, shuffled().sixteen_bit("clip")); },
                            "sixteen_bit must be \"high_byte\" or \"pillow\", got \"clip\"");
  expect_error<ConfigError>([&] { check_image_dataset_options(shuffled().cache_max_bytes(0)); },
                            "cache_max_bytes must be >= 1 (bytes of cached image data), got 0");
}

}  // namespace image_dataset_cache_test
