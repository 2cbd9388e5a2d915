// Tests of the decoded-image cache (image_cache.h): one claim per sample, the stored bytes read back
// as floats, the byte budget (refusal, not failure), and errors naming what is wrong.
#include <gtest/gtest.h>

#include <torchfit/data/image_cache.h>
#include <torchfit/error.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace torchfit::data;

TEST(ImageCache, AClaimedSlotIsStoredOnceAndReadAsFloats) {
  ImageCache cache(3, 1000, "data/train");
  std::vector<float> out(12, -1.f);
  EXPECT_EQ(cache.read(1, out.data()), 0) << "empty";
  EXPECT_EQ(out[0], -1.f) << "nothing written";
  ASSERT_TRUE(cache.claim(1));
  EXPECT_FALSE(cache.claim(1)) << "one claim per sample";
  EXPECT_EQ(cache.read(1, out.data()), 0) << "being filled";
  cache.store(1, Image{2, 2, 1, {0, 7, 128, 255}});
  EXPECT_EQ(cache.read(1, out.data()), 1);
  EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 5), (std::vector<float>{0.f, 7.f, 128.f, 255.f, -1.f}));
  EXPECT_EQ(cache.cached_samples(), 1);
  EXPECT_EQ(cache.bytes(), 4);
  EXPECT_FALSE(cache.claim(1)) << "stored: never claimed again";
}

TEST(ImageCache, OverBudgetTheSlotIsRefusedAndStaysRefused) {
  ImageCache cache(3, 20, "data/train");
  ASSERT_TRUE(cache.claim(0));
  cache.store(0, Image{2, 2, 3, std::vector<uint8_t>(12, 1)});  // 12 of 20 bytes
  ASSERT_TRUE(cache.claim(2));
  cache.store(2, Image{2, 2, 3, std::vector<uint8_t>(12, 2)});  // 24 > 20: refused
  std::vector<float> out(12);
  EXPECT_EQ(cache.read(0, out.data()), 3);
  EXPECT_EQ(cache.read(2, out.data()), 0);
  EXPECT_FALSE(cache.claim(2)) << "refused for good: decoded on every pass";
  EXPECT_EQ(cache.bytes(), 12);
  EXPECT_EQ(cache.cached_samples(), 1);
}

TEST(ImageCache, ThreadsClaimingTheSameSamplesFillEachSlotOnce) {
  ImageCache cache(64, 1 << 20, "data/train");
  std::atomic<int> claims{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int64_t i = 0; i < 64; ++i)
        if (cache.claim(i)) {
          ++claims;
          cache.store(i, Image{1, 1, 1, {static_cast<uint8_t>(i)}});
        }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(claims.load(), 64);
  EXPECT_EQ(cache.cached_samples(), 64);
  float v = 0;
  EXPECT_EQ(cache.read(63, &v), 1);
  EXPECT_EQ(v, 63.f);
}

// The over-budget warning counts the samples whose bytes it holds: four threads store 64 KiB images
// into a budget of five; every round warns "5 of 16" and 16 × 64 KiB (the copy of a large image
// between the byte count and the sample count once made it report fewer samples at a larger mean).
TEST(ImageCache, TheOverBudgetWarningsFiguresAgreeWhileThreadsStore) {
  constexpr int64_t kImage = 64 * 1024;
  for (int round = 0; round < 40; ++round) {
    ImageCache cache(16, 5 * kImage + 1, "data/train");
    ::testing::internal::CaptureStderr();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&cache] {
        for (int64_t i = 0; i < 16; ++i)
          if (cache.claim(i)) cache.store(i, Image{256, 256, 1, std::vector<uint8_t>(kImage, 9)});
      });
    for (auto& t : threads) t.join();
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(cache.cached_samples(), 5) << "round " << round;
    ASSERT_NE(err.find("reached with 5 of 16 samples cached"), std::string::npos) << "round " << round << ": " << err;
    ASSERT_NE(err.find("would need about 1048576 bytes"), std::string::npos) << "round " << round << ": " << err;
  }
}

// A float sample (image_dataset_from_directory's resize) reads back bit for bit, at 4 bytes per value;
// one of whole numbers 0..255 is kept as bytes (1 per value) and reads back the same; −0 and values
// outside 0..255 stay float32.
TEST(ImageCache, FloatSamplesReadBackExactlyAndWholeNumbersAsBytes) {
  ImageCache cache(4, 1000, "data/train", "ImageDatasetOptions::cache_max_bytes");
  const std::vector<float> fractions = {0.f, 12.5f, 254.99998f, 1e-7f, 3.f, 255.f};
  const std::vector<float> whole = {0.f, 1.f, 128.f, 255.f, 7.f, 9.f};
  const std::vector<float> negative_zero = {-0.f, 1.f}, above = {256.f, 1.f};
  const std::vector<const std::vector<float>*> samples = {&fractions, &whole, &negative_zero, &above};
  for (int64_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(cache.claim(i));
    cache.store(i, samples[static_cast<size_t>(i)]->data(), samples[static_cast<size_t>(i)]->size(), 2);
  }
  EXPECT_EQ(cache.bytes(), 6 * 4 + 6 + 2 * 4 + 2 * 4);
  EXPECT_EQ(cache.cached_samples(), 4);
  for (int64_t i = 0; i < 4; ++i) {
    const std::vector<float>& want = *samples[static_cast<size_t>(i)];
    std::vector<float> out(want.size(), -1.f);
    EXPECT_EQ(cache.read(i, out.data()), 2);
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_EQ(out[k], want[k]) << "sample " << i << " value " << k;
      EXPECT_EQ(std::signbit(out[k]), std::signbit(want[k])) << "sample " << i << " value " << k;
    }
  }
  ImageCache small(2, 10, "data/train", "ImageDatasetOptions::cache_max_bytes");
  ASSERT_TRUE(small.claim(0));
  ::testing::internal::CaptureStderr();
  small.store(0, fractions.data(), fractions.size(), 1);  // 24 bytes > 10: refused
  const std::string err = ::testing::internal::GetCapturedStderr();
  std::vector<float> none(fractions.size(), -1.f);  // room for what a wrong store would give back
  EXPECT_EQ(small.read(0, none.data()), 0);
  EXPECT_NE(err.find("cache of data/train: budget ImageDatasetOptions::cache_max_bytes 10 (0.0 MiB)"),
            std::string::npos)
      << err;
  ASSERT_TRUE(small.claim(1));
  EXPECT_THROW(small.store(1, fractions.data(), fractions.size(), 5), std::invalid_argument) << "channels 1..4";
}

TEST(ImageCache, BadArgumentsAreErrors) {
  try {
    ImageCache(3, 0, "data/train");
    FAIL() << "expected ConfigError";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cache_max_bytes must be >= 1 (bytes of cached image data), got 0");
  }
  EXPECT_THROW(ImageCache(-1, 10, "x"), torchfit::ConfigError);
  ImageCache cache(2, 10, "data/train");
  float v;
  EXPECT_THROW(cache.read(2, &v), torchfit::IndexError);
  EXPECT_THROW(cache.claim(-1), torchfit::IndexError);
  EXPECT_THROW(cache.store(0, Image{1, 1, 1, {0}}), std::logic_error) << "not claimed";
}
