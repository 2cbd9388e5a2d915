#pragma once
/// @file directory_iterator.h
/// DirectoryIterator — batches from an image folder tree `directory/<class>/**/*.png|jpg|…`, as
/// keras.preprocessing.image.DirectoryIterator (flow_from_directory), with worker threads and a
/// bounded prefetch queue. It composes the data pipeline's jobs: the listing (image_folder.h), the
/// decoded-image cache (image_cache.h), the batch assembly, buffer pool and prefetch ring
/// (prefetch_ring.h) and the label encoding (label_encoder.h); what it adds itself is the per-sample
/// work (decode, resize, augment) and the replacement of files that fail to decode.
#include <torch/arg.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_cache.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_folder.h>
#include <torchfit/data/prefetch_ring.h>

namespace torchfit::data {

/// (height, width) pair in pixels.
using Size2 = std::array<int64_t, 2>;

/// Arguments of flow_from_directory (Keras names and defaults, plus torchfit's threading and
/// bad-file options). Chained setters: `FlowOptions().target_size({150, 150}).batch_size(32)`.
struct FlowOptions {
  /// (height, width) in pixels every image is resized to (Keras order). Default (256, 256).
  TORCH_ARG(Size2, target_size) = {256, 256};
  /// "rgb" (3 channels, default) | "grayscale" (1) | "rgba" (4). See load_image for conversions.
  TORCH_ARG(std::string, color_mode) = "rgb";
  /// Explicit class list (sub-folder names); its order gives the indices. Empty ⇒ every immediate
  /// sub-folder, sorted by code point ("1", "10", "2"). Folders not listed are ignored (Keras).
  TORCH_ARG(std::vector<std::string>, classes) = {};
  /// Class map of another iterator (typically the training one): the indices are taken from it, by
  /// name. Every sub-folder of `directory` must be in it (ConfigError naming the extra class);
  /// classes of the map without a folder here stay classes with no samples. Takes precedence over
  /// `classes`.
  TORCH_ARG(ClassIndices, class_indices) = {};
  /// "categorical" (one-hot float32 (N, K), default) | "sparse" (int64 (N)) | "binary" (float32
  /// (N, 1), needs exactly 2 classes) | "input" (y = a copy of x) | "none" (y undefined).
  TORCH_ARG(std::string, class_mode) = "categorical";
  /// Samples per batch (> 0). Default 32. The last batch of a pass is partial.
  TORCH_ARG(int64_t, batch_size) = 32;
  /// Re-draw a random order at the start of every pass (default true); false ⇒ sorted file order.
  TORCH_ARG(bool, shuffle) = true;
  /// Seed of the shuffling and of every augmentation draw. Unset ⇒ drawn from std::random_device.
  TORCH_ARG(std::optional<uint64_t>, seed) = std::nullopt;
  /// "" (all files), "training" or "validation" (needs the generator's validation_split).
  TORCH_ARG(std::string, subset) = "";
  /// Resize interpolation, as Keras's load_img (PIL-exact, see resize_image in image.h): "nearest"
  /// (Keras default) | "bilinear" | "bicubic" | "box" | "hamming" | "lanczos" | "area" (= "box").
  TORCH_ARG(std::string, interpolation) = "nearest";
  /// Follow symbolic links to sub-folders while collecting files (Keras follow_links). Default false.
  TORCH_ARG(bool, follow_links) = false;
  /// Worker threads that decode and augment, 0..kMaxWorkers; 0 (default) ⇒
  /// std::thread::hardware_concurrency(). A thread the system refuses to start is an IoError naming it.
  /// The produced batches do not depend on this number.
  TORCH_ARG(int64_t, workers) = 0;
  /// Batches prepared ahead of the consumer (bounded prefetch queue; Keras max_queue_size). Default 10.
  TORCH_ARG(int64_t, max_queue_size) = 10;
  /// What to do with a file that fails the header check or decoding: "skip" (default; warn once
  /// naming it, leave it out — or, when it only fails while decoding during training, replace it by
  /// the next good file of the same class) | "error" (IoError naming the file).
  TORCH_ARG(std::string, on_bad_image) = "skip";
  /// Pixel limit, as Pillow's Image.MAX_IMAGE_PIXELS (which Keras's load_img goes through): a file of
  /// more than max_image_pixels pixels (width·height) is loaded with a warning naming it, one of more
  /// than twice as many is skipped like an unreadable file ("image too large: W x H = N pixels, limit
  /// L …", counted in the "Skipped" summary; IoError with on_bad_image "error"). Checked from the
  /// header before decoding (see check_image_file). Default kMaxImagePixels = 89,478,485, Pillow's
  /// default; 0 = no limit (Pillow's None). ConfigError when negative.
  TORCH_ARG(int64_t, max_image_pixels) = kMaxImagePixels;
  /// How 16-bit samples become 8-bit: "high_byte" (default; value >> 8 for every 16-bit file) |
  /// "pillow" (Keras's load_img exactly: a 16-bit grayscale file clipped to 0..255, colour files by
  /// high byte). See SixteenBit in image.h. ConfigError for another value.
  TORCH_ARG(std::string, sixteen_bit) = "high_byte";
  /// Apply the generator's random transforms to subset "validation" too. Default false: torchfit
  /// validates on the images as they are (so validation figures do not move with augmentation draws);
  /// Keras 1.1 augments the validation subset (it is the same generator) — true gives that behaviour.
  TORCH_ARG(bool, augment_validation) = false;
  /// Print "Found N images belonging to K classes." on stdout (Keras always prints). Default true.
  TORCH_ARG(bool, verbose) = true;
  /// Keep every sample's decoded, resized 8-bit image in memory after its first load (tf.data's
  /// `cache()`): later passes neither read, decode nor resize it. The random augmentation is still
  /// drawn and applied per pass, so the batches are identical with and without the cache (same seed).
  /// The cache keeps the first read of each file (a file changed on disk later is not re-read), and
  /// a file replaced after a decoding failure keeps its replacement. It is not part of
  /// stream_config(): a run may be resumed with or without it. Default false.
  TORCH_ARG(bool, cache) = false;
  /// Memory budget of the cache, in bytes of image data (H·W·channels per sample; a gray file going
  /// into an rgb batch is kept with one channel). Default kDefaultCacheMaxBytes (4 GiB). When the
  /// dataset does not fit, the samples loaded first are cached until the budget is spent and the
  /// others are decoded on every pass (one warning says so) — a fallback, not an error. ConfigError
  /// when < 1.
  TORCH_ARG(int64_t, cache_max_bytes) = kDefaultCacheMaxBytes;
};

/// Keras's DirectoryIterator: an endless BatchIterator over an image folder tree.
///
/// Discovery (at construction, list_image_classes + list_image_files of image_folder.h): classes are
/// the immediate sub-folders (sorted by code point, or FlowOptions::classes / class_indices); files are
/// collected recursively below each class folder,
/// folders walked in sorted path order and files sorted inside each folder; accepted are names whose
/// lower-cased form ends in .png .jpg .jpeg .bmp .ppm .tif .tiff; hidden entries (name starting with
/// ".", e.g. .DS_Store, ._x.jpg, .ipynb_checkpoints/) and __MACOSX/ are ignored (the extension only
/// selects files, as Keras: a WebP named .jpg is decoded as WebP, a .webp file is not collected). Every
/// file gets a header check (check_image_file with max_image_pixels): empty, non-image, unsupported
/// and too large files are skipped there, named in a warning and counted in the summary. A file whose
/// pixel data the decoder cannot decode (truncated, corrupt) is found when a worker decodes it: with
/// on_bad_image "skip" it is named in a warning and replaced by the next good file of its class.
/// With validation_split v, per class the first int(v·n) files form subset "validation", the rest
/// "training"; the validation subset is not augmented unless augment_validation is set (Keras augments
/// it). Prints "Found N images belonging to K classes." (plus " Skipped S unreadable files."
/// when some were left out).
///
/// Batches: x is float32 (N, C, H, W) with C from color_mode and (H, W) = target_size, values
/// 0..255 times rescale; y as class_mode says (see FlowOptions::class_mode); indices are positions in
/// filenames(). Pass p visits the samples in pass_order(n, shuffle, seed, p); the sample at position
/// i of pass p draws its augmentation from Rng(sample_seed(seed, p, i)). So a seed fixes every
/// batch, whatever the number of workers.
///
/// Threads (a PrefetchRing, prefetch_ring.h): `workers` threads start on the first next() and fill
/// whole batches (a BatchAssembler: each writes straight into its batch tensor) into a ring of
/// max_queue_size slots; next() hands them out in order.
/// Destroying or reset()ting the iterator stops and joins them promptly (mid-batch). Per sample a
/// worker takes no lock (the ring's lock is taken once per batch) and reuses its own buffers.
///
/// Batch memory (BatchBufferPool): x tensors come from a pool of buffers of one full batch each, returned when the
/// tensor (and every view of it) is freed, so a long run does not fault fresh pages in per batch
/// (with two workers glibc unmapped and re-faulted its per-thread heaps, which halved the rate).
/// The tensors do not own resizable storage (resize_ throws); clone() one to get that.
///
/// Cache (FlowOptions::cache; an ImageCache, image_cache.h): one slot per sample, allocated at
/// construction, each with an atomic state; the worker that loads a sample first fills its slot (the
/// budget is an atomic byte count), every later load reads it. No lock; a slot is written once and
/// never freed before the iterator.
///
/// Labels: encode_labels (label_encoder.h) from the samples' class indices.
///
/// Errors (constructor): IoError when `directory` is missing or not a folder, or when no image is
/// found at all (naming the directory); IoError naming the first bad file with on_bad_image "error";
/// ConfigError for bad options (target_size < 1, batch_size < 1, max_image_pixels < 0, cache_max_bytes < 1, unknown
/// color_mode, class_mode, subset, interpolation or on_bad_image; binary with K ≠ 2; subset without validation_split; a
/// folder missing from class_indices). next() rethrows a worker's IoError.
class DirectoryIterator : public BatchIterator {
 public:
  /// `generator` may be null: no augmentation and no rescale (values 0..255).
  DirectoryIterator(const std::string& directory, FlowOptions options,
                    std::shared_ptr<const ImageDataGenerator> generator = nullptr);
  ~DirectoryIterator() override;
  DirectoryIterator(const DirectoryIterator&) = delete;
  DirectoryIterator& operator=(const DirectoryIterator&) = delete;

  Batch next() override;
  int64_t samples() const override { return static_cast<int64_t>(listing_.filepaths.size()); }
  int64_t batch_size() const override { return options_.batch_size(); }
  void reset() override;
  /// Moves on by `batches` without decoding them (the batches are a function of seed, pass and
  /// position, so the next() after skip(k) equals the (k+1)-th next() of a fresh iterator).
  void skip(int64_t batches) override;
  /// Batch size, samples, seed, shuffle, target size, colour mode, interpolation, class mode and the
  /// augmentation in use (options_text of the generator; "none" for a validation subset or none given).
  StreamConfig stream_config() const override;
  /// The generator's standardisation (data::preprocessing_config): rescale, samplewise centre/std.
  nlohmann::json preprocessing() const override;
  std::map<std::string, int64_t> class_indices() const override { return class_indices_; }
  /// Paths relative to `directory`, e.g. "Coat/00012.png" (Keras `filenames`).
  std::vector<std::string> filenames() const override { return listing_.filenames; }

  /// Number of samples (Keras `n`).
  int64_t n() const { return samples(); }
  int64_t num_classes() const { return static_cast<int64_t>(class_indices_.size()); }
  /// Class index of every sample, in filenames() order (Keras `classes`).
  const std::vector<int64_t>& classes() const { return listing_.classes; }
  /// Full paths (directory / filename), in filenames() order (Keras `filepaths`).
  const std::vector<std::string>& filepaths() const { return listing_.filepaths; }
  /// Class names ordered by index.
  std::vector<std::string> class_names() const { return listing_.class_names; }
  /// Shape of one sample, (C, H, W).
  std::array<int64_t, 3> image_shape() const {
    return {channels_, options_.target_size()[0], options_.target_size()[1]};
  }
  /// Files left out at construction, with reasons.
  const std::vector<SkippedFile>& skipped() const { return listing_.skipped; }
  /// Data-parallel shard (BatchIterator::shard); batches already prefetched are dropped and rebuilt.
  void shard(int64_t rank, int64_t world_size) override;
  /// Sample indices (into filenames()) whose file failed to decode in a worker so far: their places in
  /// batches hold another readable file of the class (fine for training; a predictor drops them).
  std::set<int64_t> replaced_samples();
  /// Samples whose image is in the cache now (0 without FlowOptions::cache).
  int64_t cached_samples() const;
  /// Bytes of image data in the cache now (≤ cache_max_bytes).
  int64_t cache_bytes() const;
  /// Whether random augmentation is applied (false for subset "validation" or a generator without any).
  bool augmenting() const { return augment_; }
  /// The seed in use (the given one, or the one drawn when none was given).
  uint64_t seed() const { return seed_; }
  const FlowOptions& options() const { return options_; }
  /// The directory this iterator reads.
  const std::string& directory() const { return directory_; }

  /// Builds the batch at `(pass, batch_index)` on the calling thread, without the queue (used by the
  /// workers and by tests). Errors: IndexError when pass < 0 or batch_index is outside
  /// 0..batches_per_pass()−1; IoError for an unreadable file with on_bad_image "error".
  Batch make_batch(int64_t pass, int64_t batch_index);
  /// Keras's `it[index]`: batch `index` (0..batches_per_pass()−1, Keras's len(it)) of the pass that
  /// next() is in, built on the calling thread; it does not move next()'s position. Errors: IndexError
  /// naming the index and the range (Keras: ValueError "Asked to retrieve element …"); as make_batch.
  Batch batch(int64_t index);

 private:
  struct State;    // the ring, the batch assembler, the cache, the replaced files (the .cpp)
  struct Scratch;  // a worker's reusable buffers

  void discover();
  Batch make_job(int64_t job);
  void load_sample(int64_t index, int64_t pass, int64_t position, float* out, Scratch& scratch);
  Image decode_sample(int64_t index);
  bool decode_file(const std::string& path, Image& out);
  void check_batch_index(int64_t pass, int64_t batch_index) const;

  std::string directory_;
  FlowOptions options_;
  std::shared_ptr<const ImageDataGenerator> generator_;
  bool augment_ = false;
  ColorMode color_mode_ = ColorMode::rgb;
  SixteenBit sixteen_bit_ = SixteenBit::high_byte;
  int64_t channels_ = 3;
  uint64_t seed_ = 0;
  bool skip_bad_ = true;

  ClassIndices class_indices_;
  ImageFolderListing listing_;  // classes, files (relative and full), class per file, skipped files
  std::vector<std::vector<int64_t>> samples_of_class_;

  std::unique_ptr<State> state_;
};

}  // namespace torchfit::data
