// ImageCache: one write-once slot per sample, read without a lock; a byte budget under one lock per store.
#include <torchfit/data/image_cache.h>
#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace torchfit::data {

namespace {
constexpr uint8_t kSlotEmpty = 0, kSlotFilling = 1, kSlotReady = 2, kSlotRefused = 3;
}  // namespace

// One sample's cached image: state kSlotEmpty → kSlotFilling (claimed by one thread) → kSlotReady, or
// kSlotRefused when the budget was spent. `size` values, as bytes (`pixels`) or as float32 (`values`);
// they, `size` and `channels` are published by the release store of kSlotReady.
struct ImageCache::Slot {
  std::atomic<uint8_t> state{kSlotEmpty};
  uint8_t channels = 0;
  size_t size = 0;
  std::unique_ptr<uint8_t[]> pixels;
  std::unique_ptr<float[]> values;
};

void ImageCache::check_max_bytes(int64_t max_bytes) {
  if (max_bytes < 1)
    throw ConfigError("cache_max_bytes must be >= 1 (bytes of cached image data), got " + std::to_string(max_bytes));
}

ImageCache::ImageCache(int64_t samples, int64_t max_bytes, std::string source, std::string option)
    : samples_(samples), max_bytes_(max_bytes), source_(std::move(source)), option_(std::move(option)) {
  check_max_bytes(max_bytes);
  if (samples < 0) throw ConfigError("ImageCache: samples must be >= 0, got " + std::to_string(samples));
  slots_ = std::make_unique<Slot[]>(static_cast<size_t>(samples));
}

ImageCache::~ImageCache() = default;

ImageCache::Slot& ImageCache::slot(int64_t index) const {
  if (index < 0 || index >= samples_)
    throw IndexError("image cache of " + source_ + ": sample " + std::to_string(index) + " is outside 0.." +
                     std::to_string(samples_ - 1));
  return slots_[static_cast<size_t>(index)];
}

int ImageCache::read(int64_t index, float* out) const {
  const Slot& s = slot(index);
  if (s.state.load(std::memory_order_acquire) != kSlotReady) return 0;
  if (s.values) {
    std::memcpy(out, s.values.get(), s.size * sizeof(float));
  } else {
    const uint8_t* px = s.pixels.get();
    for (size_t i = 0; i < s.size; ++i) out[i] = px[i];
  }
  return s.channels;
}

bool ImageCache::claim(int64_t index) {
  uint8_t expected = kSlotEmpty;
  return slot(index).state.compare_exchange_strong(expected, kSlotFilling, std::memory_order_acq_rel);
}

ImageCache::Slot& ImageCache::claimed_slot(int64_t index) const {
  Slot& s = slot(index);
  if (s.state.load(std::memory_order_acquire) != kSlotFilling)
    throw std::logic_error("ImageCache::store: sample " + std::to_string(index) + " was not claimed");
  return s;
}

// Takes `bytes` of the budget for the claimed slot `s`, or marks it refused (the first refusal warns).
bool ImageCache::reserve(Slot& s, int64_t bytes) {
  // The bytes and the sample count change together, so a refusal's warning sees the samples whose
  // bytes it counts (with two atomics a worker between the two adds made it report 2 of 3).
  std::lock_guard<std::mutex> lock(budget_mutex_);
  if (bytes_.load() + bytes > max_bytes_) {
    s.state.store(kSlotRefused, std::memory_order_release);
    if (!full_warned_) warn_full(bytes);
    full_warned_ = true;
    return false;
  }
  bytes_.fetch_add(bytes);
  cached_samples_.fetch_add(1);
  return true;
}

void ImageCache::store(int64_t index, const Image& image) {
  Slot& s = claimed_slot(index);
  if (!reserve(s, static_cast<int64_t>(image.pixels.size()))) return;
  s.pixels.reset(new uint8_t[image.pixels.size()]);  // not zeroed: overwritten at once
  std::memcpy(s.pixels.get(), image.pixels.data(), image.pixels.size());
  s.size = image.pixels.size();
  s.channels = static_cast<uint8_t>(image.channels);
  s.state.store(kSlotReady, std::memory_order_release);  // publishes pixels, size and channels
}

void ImageCache::store(int64_t index, const float* values, size_t count, int channels) {
  if (channels < 1 || channels > 4)
    throw std::invalid_argument("ImageCache::store: channels must be 1..4, got " + std::to_string(channels));
  Slot& s = claimed_slot(index);
  // Whole numbers 0..255 (a sample at its own size, nearest) read back exactly from bytes: 4× less memory
  // (−0 stays float: its sign would be lost).
  const bool bytes = std::all_of(values, values + count, [](float v) {
    return v >= 0.f && v <= 255.f && !std::signbit(v) && v == static_cast<float>(static_cast<int>(v));
  });
  if (!reserve(s, static_cast<int64_t>(count * (bytes ? 1 : sizeof(float))))) return;
  if (bytes) {
    s.pixels.reset(new uint8_t[count]);
    for (size_t i = 0; i < count; ++i) s.pixels[i] = static_cast<uint8_t>(values[i]);
  } else {
    s.values.reset(new float[count]);
    std::memcpy(s.values.get(), values, count * sizeof(float));
  }
  s.size = count;
  s.channels = static_cast<uint8_t>(channels);
  s.state.store(kSlotReady, std::memory_order_release);  // publishes pixels or values, size and channels
}

void ImageCache::warn_full(int64_t refused_bytes) const {
  // At the mean size of the samples cached so far (gray files are cached with one channel).
  const int64_t held = bytes_.load(), n = cached_samples_.load();
  const double mean = n > 0 ? static_cast<double>(held) / static_cast<double>(n) : static_cast<double>(refused_bytes);
  const double all = mean * static_cast<double>(samples_);
  torchfit::logger().warn(
      "cache of {}: budget {} {} ({:.1f} MiB) "
      "reached with {} of {} samples cached; the others are decoded on every pass (all of them would "
      "need about {} bytes = {:.1f} MiB)",
      source_, option_, max_bytes_, static_cast<double>(max_bytes_) / 1048576.0, n, samples_, static_cast<int64_t>(all),
      all / 1048576.0);
}

}  // namespace torchfit::data
