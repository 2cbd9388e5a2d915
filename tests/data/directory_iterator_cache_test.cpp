// Tests of DirectoryIterator's decoded-image cache (FlowOptions::cache): identical batches with and
// without it, the memory budget, bad options, and what it keeps (first read, replacements).
#include <gtest/gtest.h>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/image_tree.h"
#include "support/temp_dir.h"

using namespace torchfit::data;
using torchfit::testing::make_tree;
using torchfit::testing::pattern;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;
using torchfit::testing::write_png;

namespace {

FlowOptions quiet_flow() { return FlowOptions().verbose(false); }

// A tree of colour and gray PNGs of several sizes (gray files take the one-channel path).
void make_mixed_tree(const std::filesystem::path& root) {
  make_tree(root, {"a", "b", "c"}, 5, 12);
  for (int k = 0; k < 4; ++k) {
    Image g{9 + k, 7, 1, std::vector<uint8_t>(static_cast<size_t>((9 + k) * 7))};
    for (size_t i = 0; i < g.pixels.size(); ++i) g.pixels[i] = static_cast<uint8_t>((k * 41 + i * 13) % 256);
    write_png(root / (k % 2 ? "a" : "c") / ("gray" + std::to_string(k) + ".png"), g);
  }
}

std::vector<Batch> take(BatchIterator& it, int n) {
  std::vector<Batch> out;
  for (int i = 0; i < n; ++i) out.push_back(it.next());
  return out;
}

void expect_same_batches(const std::vector<Batch>& a, const std::vector<Batch>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].indices, b[i].indices) << what << " batch " << i;
    ASSERT_EQ(a[i].x.sizes(), b[i].x.sizes()) << what << " batch " << i;
    EXPECT_TRUE(at::equal(a[i].x, b[i].x))
        << what << " batch " << i << ": max |diff| " << (a[i].x - b[i].x).abs().max().item<float>();
    EXPECT_TRUE(at::equal(a[i].y, b[i].y)) << what << " batch " << i;
  }
}

// Sample `index`'s image in the batches of pass `pass` (batches_per_pass batches each).
at::Tensor sample_in_pass(const std::vector<Batch>& batches, int64_t per_pass, int64_t pass, int64_t index) {
  for (int64_t b = pass * per_pass; b < (pass + 1) * per_pass; ++b)
    for (size_t i = 0; i < batches[static_cast<size_t>(b)].indices.size(); ++i)
      if (batches[static_cast<size_t>(b)].indices[i] == index) return batches[static_cast<size_t>(b)].x[i];
  return {};
}

}  // namespace

TEST(DirectoryIteratorCacheTest, BatchesAreIdenticalWithAndWithoutTheCacheOverThreePassesAndWorkers) {
  TempDir d;
  make_mixed_tree(d.path);
  const std::vector<ImageDataGeneratorOptions> generators = {
      article_augmentation().width_shift_range(0.1).height_shift_range(0.1).vertical_flip(true),
      article_augmentation().fill_mode("constant").cval(40).channel_shift_range(20),
  };
  for (size_t gi = 0; gi < generators.size(); ++gi) {
    for (const std::string interpolation : {"nearest", "bilinear"}) {
      auto gen = std::make_shared<const ImageDataGenerator>(generators[gi]);
      const auto flow = quiet_flow().target_size({15, 11}).batch_size(4).seed(7).interpolation(interpolation);
      DirectoryIterator plain(d.str(), FlowOptions(flow).workers(1), gen);
      const int64_t per_pass = plain.batches_per_pass();  // 19 samples: 5 batches
      const int n = static_cast<int>(3 * per_pass);       // three passes: the cache is read in two of them
      const auto expected = take(plain, n);
      const std::string what = "generator " + std::to_string(gi) + " " + interpolation;
      for (int64_t workers : {1, 3}) {
        DirectoryIterator cached(d.str(), FlowOptions(flow).workers(workers).cache(true), gen);
        expect_same_batches(expected, take(cached, n), what + " workers " + std::to_string(workers));
        EXPECT_EQ(cached.cached_samples(), cached.n()) << "every sample is cached after the first pass";
        // 15 colour files 15x11x3 and 4 gray files kept with one channel.
        EXPECT_EQ(cached.cache_bytes(), 15 * 15 * 11 * 3 + 4 * 15 * 11);
      }
      EXPECT_EQ(plain.cached_samples(), 0);
      // The augmentation is drawn again every pass: a sample's image differs between passes.
      const at::Tensor p0 = sample_in_pass(expected, per_pass, 0, 2), p1 = sample_in_pass(expected, per_pass, 1, 2);
      ASSERT_TRUE(p0.defined() && p1.defined());
      EXPECT_FALSE(at::equal(p0, p1)) << what << ": pass 1 must not reuse pass 0's augmented image";
    }
  }
}

TEST(DirectoryIteratorCacheTest, OverBudgetCachesTheFirstSamplesWarnsOnceAndKeepsTheBatches) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 6, 10);  // 12 colour files, 8x8x3 = 192 bytes each once resized
  auto gen = std::make_shared<const ImageDataGenerator>(article_augmentation());
  const auto flow = quiet_flow().target_size({8, 8}).batch_size(5).seed(3).workers(2);
  DirectoryIterator plain(d.str(), flow, gen);
  const auto expected = take(plain, 9);  // three passes of 3 batches
  DirectoryIterator small(d.str(), FlowOptions(flow).cache(true).cache_max_bytes(3 * 192 + 100), gen);
  testing::internal::CaptureStderr();
  const auto got = take(small, 9);
  const std::string err = testing::internal::GetCapturedStderr();
  expect_same_batches(expected, got, "over budget");
  EXPECT_EQ(small.cached_samples(), 3);
  EXPECT_EQ(small.cache_bytes(), 3 * 192);
  EXPECT_NE(err.find("budget FlowOptions::cache_max_bytes 676 (0.0 MiB) reached with 3 of 12 samples cached"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("would need about 2304 bytes"), std::string::npos) << err;  // 12 × 8·8·3 at the cached size
  EXPECT_EQ(err.find("cache_max_bytes", err.find("cache_max_bytes") + 1), std::string::npos) << "warned once: " << err;
}

TEST(DirectoryIteratorCacheTest, BadCacheBudgetIsAConfigErrorNamingTheOption) {
  TempDir d;
  make_tree(d.path, {"a"}, 2);
  for (int64_t bad : {int64_t{-1}, int64_t{0}}) {
    try {
      DirectoryIterator it(d.str(), quiet_flow().cache(true).cache_max_bytes(bad));
      FAIL() << "no exception for " << bad;
    } catch (const torchfit::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("cache_max_bytes must be >= 1"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(bad)), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(DirectoryIterator(d.str(), quiet_flow().cache_max_bytes(-5)), torchfit::ConfigError)
      << "checked with the cache off too";
}

TEST(DirectoryIteratorCacheTest, CacheKeepsTheFirstReadOfAFileChangedOnDisk) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 2, 6);
  const auto flow = quiet_flow().target_size({6, 6}).batch_size(4).shuffle(false);
  DirectoryIterator plain(d.str(), flow), cached(d.str(), FlowOptions(flow).cache(true));
  // make_batch builds on this thread (no prefetching worker could read the file early).
  const Batch p0 = plain.make_batch(0, 0), c0 = cached.make_batch(0, 0);
  ASSERT_TRUE(at::equal(p0.x, c0.x));
  write_png(d.path / "a" / "00.png", pattern(6, 6, 99));  // the file changes between passes
  const Batch p1 = plain.make_batch(1, 0), c1 = cached.make_batch(1, 0);
  EXPECT_FALSE(at::equal(p1.x[0], p0.x[0])) << "without the cache the new file is read";
  EXPECT_TRUE(at::equal(c1.x[0], c0.x[0])) << "the cache keeps the first read";
  EXPECT_TRUE(at::equal(c1.x.slice(0, 1), p1.x.slice(0, 1)));
}

TEST(DirectoryIteratorCacheTest, ReplacedUndecodableFileKeepsItsReplacementAndStreamConfigIgnoresCache) {
  TempDir d;
  make_tree(d.path, {"a", "b"}, 3);
  std::vector<uint8_t> png = encode_png(pattern(8, 8, 1));
  const std::string s(png.begin(), png.end());
  const size_t idat = s.find("IDAT");
  ASSERT_NE(idat, std::string::npos);
  png[idat + 4] = png[idat + 5] = 0xFF;  // broken zlib header: passes the header check, fails decoding
  write_bytes(d.path / "a" / "03_broken.png", png);
  auto gen = std::make_shared<const ImageDataGenerator>(article_augmentation());
  const auto flow = quiet_flow().target_size({8, 8}).batch_size(7).seed(5).workers(2);
  DirectoryIterator plain(d.str(), flow, gen), cached(d.str(), FlowOptions(flow).cache(true), gen);
  testing::internal::CaptureStderr();
  expect_same_batches(take(plain, 4), take(cached, 4), "with a replaced file");
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(cached.replaced_samples(), (std::set<int64_t>{3}));
  EXPECT_EQ(cached.cached_samples(), 7);
  EXPECT_EQ(plain.stream_config(), cached.stream_config()) << "a run may resume with or without the cache";
}
