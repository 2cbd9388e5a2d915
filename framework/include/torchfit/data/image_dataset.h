#pragma once
/// @file image_dataset.h
/// image_dataset_from_directory — batches of (images, labels) from an image folder, as Keras 3's
/// keras.utils.image_dataset_from_directory (keras/src/utils/image_dataset_utils.py, with index_directory
/// and get_training_or_validation_split of keras/src/utils/dataset_utils.py): the file list, its shuffle
/// (NumPy's legacy RandomState, numpy_random.h), the validation split, the labels and TensorFlow's resize
/// (the Resizing layer's code) as Keras computes them. The listing is image_folder.h's walk, the workers
/// and batch memory prefetch_ring.h's, the labels label_encoder.h's.
#include <torch/arg.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_cache.h>
#include <torchfit/data/image_folder.h>

namespace torchfit::data {

/// (height, width) pair in pixels (as directory_iterator.h's).
using Size2 = std::array<int64_t, 2>;

/// Arguments of image_dataset_from_directory: Keras 3's names and defaults (Keras's None is written
/// "none", 0 or unset as each says), plus torchfit's threading, bad-file, 16-bit and cache options (the
/// cache is Keras's `dataset.cache()`). Chained setters:
/// `ImageDatasetOptions().image_size({150, 150}).validation_split(0.2).subset("training").seed(1337)`.
struct ImageDatasetOptions {
  /// "int" (default: the class index, int64 (N)) | "categorical" (one-hot float32 (N, K)) | "binary"
  /// (float32 (N, 1) of 0/1; needs exactly 2 classes) | "none" (no labels: y undefined; Keras None).
  TORCH_ARG(std::string, label_mode) = "int";
  /// Only with labels "inferred": the class sub-folders to use, in this order (their indices); each must
  /// be a sub-folder of the directory. Default empty: every sub-folder not starting with ".", sorted.
  TORCH_ARG(std::vector<std::string>, class_names) = {};
  /// "rgb" (3 channels, default) | "grayscale" (1) | "rgba" (4). See load_image for the conversions.
  TORCH_ARG(std::string, color_mode) = "rgb";
  /// Samples per batch (≥ 1). Default 32. The last batch of a pass is partial. std::nullopt: unbatched
  /// (Keras's None): next() yields one sample at a time without the batch axis — x (C, H, W), y () int64,
  /// (K) or (1) — and the per-pass shuffle buffer holds 1024 files (Keras's). For iterating samples:
  /// fit/evaluate/predict want batches (as Keras's).
  TORCH_ARG(std::optional<int64_t>, batch_size) = 32;
  /// (height, width) every image is resized to, in pixels (Keras order). Default (256, 256).
  TORCH_ARG(Size2, image_size) = {256, 256};
  /// Shuffle the file list (NumPy RandomState(seed).shuffle, as Keras) and every pass within a buffer of
  /// 8·batch_size files (as Keras's tf.data shuffle). Default true. false: Keras's walk order.
  TORCH_ARG(bool, shuffle) = true;
  /// Seed of the shuffles, in [0, 2^32 − 1]. Unset (default): drawn at random in [0, 10^6) (Keras:
  /// np.random.randint(1e6)); seed() of the dataset tells which.
  TORCH_ARG(std::optional<int64_t>, seed) = std::nullopt;
  /// Fraction in (0, 1) of the shuffled list kept for validation: the last int(v·n) files. 0 (default)
  /// = no split (Keras None).
  TORCH_ARG(double, validation_split) = 0.0;
  /// "" (default; Keras None) | "training" | "validation" | "both" (image_dataset_from_directory_both).
  /// Needs validation_split, and validation_split needs it.
  TORCH_ARG(std::string, subset) = "";
  /// tf.image.resize's method, any case (Keras lower-cases it): "bilinear" (default) | "nearest" |
  /// "bicubic" | "area" | "lanczos3" | "lanczos5" | "gaussian" | "mitchellcubic" (the Resizing layer's code,
  /// no antialiasing: Keras's tf.image.resize call passes none).
  TORCH_ARG(std::string, interpolation) = "bilinear";
  /// Walk sub-folders that are symbolic links. Default false.
  TORCH_ARG(bool, follow_links) = false;
  /// Resize the centred box of the target's aspect ratio (Keras smart_resize). Default false.
  TORCH_ARG(bool, crop_to_aspect_ratio) = false;
  /// Pad to the target's aspect ratio with zeros first, then resize (Keras 3's ops.image.resize; the
  /// tf.data path's tf.image.resize_with_pad resizes first and pads after, which differs at the border
  /// rows). Default false; not with crop_to_aspect_ratio.
  TORCH_ARG(bool, pad_to_aspect_ratio) = false;
  /// Print "Found N files belonging to K classes." and "Using M files for training." (Keras). Default true.
  TORCH_ARG(bool, verbose) = true;
  /// torchfit: decoding threads, 0..kMaxWorkers; 0 (default) ⇒ std::thread::hardware_concurrency().
  /// The batches do not depend on it.
  TORCH_ARG(int64_t, workers) = 0;
  /// torchfit: batches prepared ahead of the consumer (≥ 1). Default 10.
  TORCH_ARG(int64_t, max_queue_size) = 10;
  /// torchfit: a file that fails the header check at construction or the decoding in a worker: "skip"
  /// (default; warned and left out — or, when it only fails to decode, replaced by the next readable file
  /// of its label) | "error" (IoError naming it). Keras stops at the first undecodable file.
  TORCH_ARG(std::string, on_bad_image) = "skip";
  /// torchfit: pixel limit of one file (width·height), as FlowOptions::max_image_pixels. Default
  /// kMaxImagePixels; 0 = no limit.
  TORCH_ARG(int64_t, max_image_pixels) = kMaxImagePixels;
  /// torchfit: how 16-bit samples become 8-bit, as FlowOptions::sixteen_bit: "high_byte" (default;
  /// value >> 8 — also what Keras 3's tf.io.decode_image gives, TensorFlow's PNG reader keeping the high
  /// byte for uint8) | "pillow" (Keras's load_img: a 16-bit grayscale file clipped to 0..255, colour
  /// files by high byte). See SixteenBit in image.h. ConfigError for another value.
  TORCH_ARG(std::string, sixteen_bit) = "high_byte";
  /// Keep every sample's decoded, resized image (float32 as TensorFlow's resize gives it; bytes when
  /// every value is a whole number 0..255, e.g. at the file's own size) in memory after its first load —
  /// what a Keras user writes as `image_dataset_from_directory(...).cache()`: later passes neither read,
  /// decode nor resize it. Shuffling stays per pass, so the batches are identical with and without the
  /// cache (same seed). The cache keeps the first read of each file (a file changed on disk later is not
  /// re-read) and a file's replacement after a decoding failure. An ImageCache (image_cache.h), as
  /// FlowOptions::cache; not part of stream_config(): a run may resume with or without it. Default false.
  TORCH_ARG(bool, cache) = false;
  /// Memory budget of the cache in bytes held, as FlowOptions::cache_max_bytes: 4 per value of a float
  /// sample (C·H·W·4; 150×150 rgb: 270,000 B), 1 per value of a byte one. Default kDefaultCacheMaxBytes
  /// (4 GiB). Over it the samples loaded first stay cached and the others are decoded on every pass (one
  /// warning says so) — a fallback, not an error. ConfigError when < 1 (checked with the cache off too).
  TORCH_ARG(int64_t, cache_max_bytes) = kDefaultCacheMaxBytes;

 public:
  /// Keras's `labels`: "inferred" (default; from the sub-folders) or "none" (no labels; Keras None).
  ImageDatasetOptions& labels(const std::string& mode) {
    labels_ = mode;
    label_list_.clear();
    return *this;
  }
  /// Keras's `labels` as a list: one integer label per file, in the walk order of the whole directory
  /// (os.walk sorted: folders by path, files by name) — before any shuffle. labels() is then "list".
  ImageDatasetOptions& labels(std::vector<int64_t> list) {
    labels_ = "list";
    label_list_ = std::move(list);
    return *this;
  }
  /// "inferred" | "none" | "list" (or what labels(std::string) was given).
  const std::string& labels() const { return labels_; }
  /// The explicit labels (labels() == "list").
  const std::vector<int64_t>& label_list() const { return label_list_; }

 private:
  std::string labels_ = "inferred";
  std::vector<int64_t> label_list_;
};

/// Keras's index_directory result, after its shuffle: the files (full paths, directory joined with the
/// path below it), one label per file (empty for labels "none") and the class names (folders, or the
/// sorted distinct labels of a list as text; empty for "none").
struct ImageDatasetIndex {
  std::vector<std::string> file_paths;
  std::vector<int64_t> labels;
  std::vector<std::string> class_names;
  /// The seed of the shuffles (the given one or the one drawn).
  int64_t seed = 0;
};

/// Checks `options` in Keras's order (labels, label_mode, color_mode, image_size, interpolation, then
/// check_validation_split_arg) with our names, then torchfit's (on_bad_image, sixteen_bit,
/// cache_max_bytes). Errors: ConfigError naming the argument and the value.
void check_image_dataset_options(const ImageDatasetOptions& options);

/// Keras's index_directory for image_dataset_from_directory (formats .bmp .gif .jpeg .jpg .png in any
/// case): with labels "inferred" the class folders (sorted sub-folders not starting with ".", or
/// class_names, each of which must be one) are walked in class order, each as list_folder_files with
/// Keras 3's rules (keep_hidden: hidden files and sub-folders count); otherwise the whole directory is
/// walked as one folder. Labels: the class index, the given list, or none. Prints "Found N files
/// belonging to K classes." ("Found N files." without labels) when verbose. Then, when shuffle, the
/// files and the labels are shuffled by NumPy's RandomState(seed).shuffle (the same permutation); the
/// seed, when unset, is drawn in [0, 10^6). No header check here.
/// Errors: IoError when `directory` is missing or not a folder; ConfigError for a class_names entry that
/// is not a sub-folder, class_names without labels "inferred", a label list whose length differs from
/// the number of files, a seed outside [0, 2^32 − 1].
ImageDatasetIndex index_image_directory(const std::string& directory, const ImageDatasetOptions& options);

/// Keras's get_training_or_validation_split: without validation_split everything; else with
/// m = int(validation_split · n) "training" keeps the first n − m files, "validation" the last m
/// (printing "Using K files for training." / "… for validation." when verbose). Errors: ConfigError for
/// another subset, and when m is 0 or n (Keras then gives one subset every file and the other none).
ImageDatasetIndex training_or_validation_split(const ImageDatasetIndex& index, double validation_split,
                                               const std::string& subset, bool verbose = true);

/// The order of one pass of tf.data's `shuffle(buffer_size)` over 0 … n−1: a buffer holds the next
/// `buffer` elements, each output is a uniform draw from the buffer, refilled from the input. Drawn from
/// (seed, pass) with torchfit's Rng (TensorFlow's own draws are not reproduced). Errors: IndexError for
/// n < 0, pass < 0 or buffer < 1.
std::vector<int64_t> buffered_shuffle_order(int64_t n, int64_t buffer, uint64_t seed, int64_t pass);

/// Batches of a subset of an image folder as image_dataset_from_directory yields them; an endless
/// BatchIterator (passes of ceil(n / batch_size) batches), so Trainer::fit can train from it.
///
/// x: float32 (N, C, H, W) — Keras (N, H, W, C) — with C from color_mode and (H, W) = image_size,
/// values 0..255 (no rescale), resized by tf.image.resize's rule (Resizing's code: every interpolation,
/// crop/pad to the aspect ratio). y: as label_mode says (int → int64 (N); categorical → float32 (N, K)
/// one-hot; binary → float32 (N, 1); none → undefined). indices: positions in file_paths(). Unbatched
/// (batch_size std::nullopt): one sample per next(), x (C, H, W) and y without the N axis.
/// Order: pass p is buffered_shuffle_order(n, 8·batch_size (1024 unbatched), seed, p) when shuffling
/// (Keras's tf.data shuffle per epoch), else file_paths() order.
/// Bad files: every file gets the header check at construction (skipped or IoError as on_bad_image
/// says); one that fails to decode later is replaced by the next readable file of the same label.
/// Cache (options cache, cache_max_bytes): an ImageCache of one slot per sample, allocated at
/// construction; the worker that loads a sample first stores its resized values, every later load of
/// it (any pass) copies them — the order of each pass is drawn as without it.
/// Errors (constructor): ConfigError for bad options; IoError with on_bad_image "error" for a bad file,
/// and when no file is left. next() rethrows a worker's IoError.
class ImageDataset : public BatchIterator {
 public:
  /// A dataset over `index` (already split) read from `directory` (for messages). `shuffle`: shuffle
  /// every pass (the validation dataset of "both" does not, as Keras).
  ImageDataset(std::string directory, ImageDatasetIndex index, ImageDatasetOptions options, bool shuffle);
  ~ImageDataset() override;
  ImageDataset(const ImageDataset&) = delete;
  ImageDataset& operator=(const ImageDataset&) = delete;

  Batch next() override;
  int64_t samples() const override { return static_cast<int64_t>(index_.file_paths.size()); }
  /// Samples per next(): batch_size, or 1 unbatched.
  int64_t batch_size() const override { return options_.batch_size().value_or(1); }
  /// True for batch_size std::nullopt (Keras None): samples without the batch axis.
  bool unbatched() const override { return !options_.batch_size().has_value(); }
  void reset() override;
  /// Moves the position without decoding (batches are a function of seed, pass and position).
  void skip(int64_t batches) override;
  /// Batch size, samples, seed, shuffle, image size, colour mode, interpolation, label mode, 16-bit
  /// policy, loader (not the cache: it does not change the batches).
  StreamConfig stream_config() const override;
  /// {"rescale": 0 (none), "samplewise_center": false, "samplewise_std_normalization": false}: the values
  /// are fed as they are (0..255), so a checkpoint tells predict_cnn not to rescale.
  nlohmann::json preprocessing() const override;
  /// Class name → index (the class_names; empty for labels "none").
  std::map<std::string, int64_t> class_indices() const override;
  /// The full file paths (Keras `file_paths`).
  std::vector<std::string> filenames() const override { return index_.file_paths; }
  void shard(int64_t rank, int64_t world_size) override;

  /// Keras `class_names` (empty without labels).
  const std::vector<std::string>& class_names() const { return index_.class_names; }
  /// Keras `file_paths`, in dataset order.
  const std::vector<std::string>& file_paths() const { return index_.file_paths; }
  /// One label per file (empty without labels).
  const std::vector<int64_t>& labels() const { return index_.labels; }
  /// The seed of the shuffles.
  int64_t seed() const { return index_.seed; }
  /// Shape of one sample, (C, H, W).
  std::array<int64_t, 3> image_shape() const;
  /// Files left out at construction, with reasons.
  const std::vector<SkippedFile>& skipped() const { return skipped_; }
  const ImageDatasetOptions& options() const { return options_; }
  /// Samples whose image is in the cache now (0 without the cache option).
  int64_t cached_samples() const;
  /// Bytes held by the cache now (≤ cache_max_bytes; 0 without the cache option).
  int64_t cache_bytes() const;
  /// Batch `batch_index` of pass `pass` (unbatched: sample `batch_index` of the pass, without the batch
  /// axis), built on the calling thread. Errors: IndexError outside
  /// the pass's batches or for pass < 0.
  Batch make_batch(int64_t pass, int64_t batch_index);

 private:
  struct State;
  void drop_bad_files();
  void load_sample(int64_t index, float* out);

  std::string directory_;
  ImageDatasetIndex index_;
  ImageDatasetOptions options_;
  bool shuffle_;
  std::vector<SkippedFile> skipped_;
  std::unique_ptr<State> state_;
};

/// Keras 3's keras.utils.image_dataset_from_directory for subset "", "training" or "validation": checks
/// the options, indexes (index_image_directory), splits (training_or_validation_split) and returns the
/// dataset (shuffled per pass when shuffle). Errors: as the functions it calls; ConfigError for
/// label_mode "binary" without exactly 2 classes, for subset "both" (see
/// image_dataset_from_directory_both); IoError "No images found in directory D. Allowed formats: …".
std::unique_ptr<ImageDataset> image_dataset_from_directory(const std::string& directory,
                                                           const ImageDatasetOptions& options = {});

/// subset "both": the (training, validation) pair from one index (the validation one not shuffled per
/// pass, as Keras). Errors: as image_dataset_from_directory; ConfigError when subset is not "both";
/// IoError when one side has no image.
std::pair<std::unique_ptr<ImageDataset>, std::unique_ptr<ImageDataset>> image_dataset_from_directory_both(
    const std::string& directory, const ImageDatasetOptions& options);

}  // namespace torchfit::data
