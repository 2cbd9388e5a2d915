#pragma once
/// @file image_cache.h
/// ImageCache — the decoded-image cache of a folder source (tf.data's `cache()` for image folders):
/// one slot per sample holding its decoded, resized image (8-bit for flow_from_directory, float32 for
/// image_dataset_from_directory's TensorFlow resize), filled by the first load, read by every later one,
/// within a byte budget; lock-free for the worker threads that read it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <torchfit/data/image.h>

namespace torchfit::data {

/// Default memory budget of the decoded-image cache (FlowOptions::cache_max_bytes): 4 GiB.
constexpr int64_t kDefaultCacheMaxBytes = int64_t{4} << 30;

/// A fixed set of `samples` slots, all allocated at construction and never freed before the cache.
/// Each slot has an atomic state: empty → filling (claimed by one thread) → ready, or refused when the
/// budget was spent. Usage on a worker thread, per sample:
///
///     if (int c = cache.read(i, hwc)) { …hwc holds H·W·c values… }
///     else { Image img = decode(i); if (cache.claim(i)) cache.store(i, resized(img)); … }
///
/// An Image is kept as given (H, W, channels, 8-bit): a source resizes BEFORE it stores, as Keras
/// resizes before augmenting, so the cached image is the one every pass starts from (the random
/// augmentation is still drawn and applied per pass). A gray image for an rgb batch is stored with
/// one channel. A source whose resized sample is float (image_dataset_from_directory) stores the float
/// values instead (store(index, values, count, channels)), in its own order. The cache keeps the first
/// store of each slot; a slot is written once. The budget is a byte count (bytes held: H·W·channels per
/// 8-bit sample, 4 per value of a float one), kept with the count of cached samples
/// under one lock taken once per store (so the warning's figures agree): a store that would exceed it
/// is refused, the slot stays refused (that sample is decoded on every pass) and the first refusal
/// logs one warning naming `source`, the budget and its option — a fallback, not an error.
/// Threads: read, claim and store may be called from any number of threads at once (acquire/release
/// on the slot state; read and claim take no lock, store takes the budget's lock). Source: the behaviour of tf.data's
/// Dataset.cache() (in memory).
class ImageCache {
 public:
  /// `samples` slots (≥ 0), budget `max_bytes` bytes (≥ 1), `source` names the data in the warning
  /// (e.g. the directory), `option` the budget's option there (default "FlowOptions::cache_max_bytes").
  /// Errors: ConfigError "cache_max_bytes must be >= 1 …" for max_bytes < 1, ConfigError for samples < 0.
  ImageCache(int64_t samples, int64_t max_bytes, std::string source,
             std::string option = "FlowOptions::cache_max_bytes");
  ~ImageCache();
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;

  /// When sample `index` is cached (ready): writes its values as float into `out` — an Image's H·W·C
  /// pixels 0..255 in (H, W, C) order, or the `count` values given to the float store() in their order —
  /// and returns C (1..4); otherwise writes nothing and returns 0. Errors: IndexError outside
  /// 0..samples−1.
  int read(int64_t index, float* out) const;
  /// Claims the empty slot of `index` for the calling thread: true exactly once per sample (the
  /// caller must then store()); false when it is cached, being filled or refused.
  bool claim(int64_t index);
  /// Fills the slot claimed by claim(index) with `image` (H, W, C 8-bit, C ≤ 4), or marks it refused
  /// when the budget would be exceeded (the first refusal warns). Errors: IndexError outside
  /// 0..samples−1; std::logic_error when the slot was not claimed.
  void store(int64_t index, const Image& image);
  /// Fills the slot claimed by claim(index) with `count` float values of `channels` (1..4) channels, in
  /// the caller's order (a resized float sample: image_dataset_from_directory's). When every value is a
  /// whole number in 0..255 (e.g. an image already at the target size) they are kept as bytes (1 byte
  /// each; read back exactly), otherwise as float32 (4 bytes each). Budget and refusal as the Image
  /// store. Errors: IndexError outside 0..samples−1; std::logic_error when the slot was not claimed;
  /// std::invalid_argument for channels outside 1..4.
  void store(int64_t index, const float* values, size_t count, int channels);

  /// Checks a budget: ConfigError "cache_max_bytes must be >= 1 (bytes of cached image data), got N"
  /// for max_bytes < 1 (a source checks its option with it even when its cache is off).
  static void check_max_bytes(int64_t max_bytes);

  /// Samples cached now.
  int64_t cached_samples() const { return cached_samples_.load(); }
  /// Bytes of image data held now (≤ max_bytes()).
  int64_t bytes() const { return bytes_.load(); }
  int64_t max_bytes() const { return max_bytes_; }
  int64_t samples() const { return samples_; }

 private:
  struct Slot;
  Slot& slot(int64_t index) const;
  Slot& claimed_slot(int64_t index) const;
  bool reserve(Slot& s, int64_t bytes);
  void warn_full(int64_t refused_bytes) const;

  int64_t samples_;
  int64_t max_bytes_;
  std::string source_;
  std::string option_;
  std::unique_ptr<Slot[]> slots_;
  std::mutex budget_mutex_;  // guards the changes of bytes_ and cached_samples_ together
  std::atomic<int64_t> bytes_{0};
  std::atomic<int64_t> cached_samples_{0};
  bool full_warned_ = false;  // under budget_mutex_
};

}  // namespace torchfit::data
