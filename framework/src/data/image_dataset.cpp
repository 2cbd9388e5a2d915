// image_dataset_from_directory: Keras 3's file index, shuffle and split (keras/src/utils/dataset_utils.py),
// and its batches, built from the folder walk (image_folder), the decoder (image), the Resizing layer's
// resize, the decoded-image cache (image_cache), the label encoding and the prefetch ring.
#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_dataset.h>
#include <torchfit/data/label_encoder.h>
#include <torchfit/data/numpy_random.h>
#include <torchfit/data/prefetch_ring.h>
#include <torchfit/data/random.h>
#include <torchfit/error.h>
#include <torchfit/layers/resizing.h>
#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

#include "data/replaced_files.h"

namespace torchfit::data {

namespace fs = std::filesystem;

namespace image_dataset_impl {

const char* const kAllowedFormatsText = "('.bmp', '.gif', '.jpeg', '.jpg', '.png')";

std::string lower_case(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string decimal_text(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
  return out + "]";
}

// Keras's supported_interpolations, after interpolation.lower().
void check_interpolation(const std::string& given) {
  static const std::set<std::string> keras = {"bilinear", "nearest",  "bicubic",  "area",
                                              "lanczos3", "lanczos5", "gaussian", "mitchellcubic"};
  if (keras.count(lower_case(given))) return;
  throw ConfigError(
      "interpolation must be one of bilinear, nearest, bicubic, area, lanczos3, lanczos5, gaussian, mitchellcubic, "
      "got \"" +
      given + "\"");
}

// Keras's dataset_utils.check_validation_split_arg.
void check_validation_split_arg(const ImageDatasetOptions& o) {
  const double v = o.validation_split();
  if (v != 0 && !(v > 0 && v < 1))
    throw ConfigError("validation_split must be between 0 and 1, got " + decimal_text(v));
  if ((v != 0 || !o.subset().empty()) && !(v != 0 && !o.subset().empty()))
    throw ConfigError("subset and validation_split go together: subset \"" + o.subset() + "\", validation_split " +
                      decimal_text(v) + " (if subset is set, validation_split must be set, and inversely)");
  if (o.subset() != "" && o.subset() != "training" && o.subset() != "validation" && o.subset() != "both")
    throw ConfigError("subset must be \"training\", \"validation\" or \"both\", got \"" + o.subset() + "\"");
  if (v != 0 && o.shuffle() && !o.seed())
    throw ConfigError("validation_split " + decimal_text(v) +
                      " with shuffle needs a seed, so that the training and validation subsets do not overlap");
}

ImageFolderOptions walk_options(const ImageDatasetOptions& o) {
  return ImageFolderOptions()
      .formats(kImageDatasetFormats)
      .keep_hidden(true)
      .follow_links(o.follow_links())
      .max_image_pixels(o.max_image_pixels())
      .workers(o.workers());
}

// The class folders: sorted sub-folders not starting with ".", or the given class_names (each one of them).
std::vector<std::string> dataset_class_names(const std::string& directory, const ImageDatasetOptions& o) {
  const ImageFolderOptions walk = walk_options(o);
  const std::vector<std::string> folders = list_image_classes(directory, walk);
  if (o.class_names().empty()) return folders;
  const std::set<std::string> have(folders.begin(), folders.end());
  std::set<std::string> seen;
  for (const auto& n : o.class_names()) {
    if (!have.count(n))
      throw ConfigError("class_names " + quoted_list(o.class_names()) + " do not match the sub-folders of " +
                        directory + ": \"" + n + "\" is not one of " + quoted_list(folders));
    if (!seen.insert(n).second) throw ConfigError("class \"" + n + "\" is listed twice in class_names");
  }
  return o.class_names();
}

std::string join_path(const std::string& directory, const std::string& rel) {
  if (!directory.empty() && directory.back() == '/') return directory + rel;
  return directory + "/" + rel;
}

// The files and their labels before the shuffle (Keras's walk order).
void walk_dataset(const std::string& directory, const ImageDatasetOptions& o, ImageDatasetIndex& out) {
  const ImageFolderOptions walk = walk_options(o);
  if (o.labels() == "inferred") {
    out.class_names = dataset_class_names(directory, o);
    for (size_t c = 0; c < out.class_names.size(); ++c) {
      const std::string& name = out.class_names[c];
      const std::vector<std::string> files = list_folder_files((fs::path(directory) / name).string(), name, walk);
      if (files.empty())
        torchfit::logger().warn("class folder {} holds no .bmp .gif .jpeg .jpg .png file; it stays a class",
                                (fs::path(directory) / name).string());
      for (const auto& rel : files) {
        out.file_paths.push_back(join_path(directory, rel));
        out.labels.push_back(static_cast<int64_t>(c));
      }
    }
    return;
  }
  list_image_classes(directory, walk);  // the directory's checks (missing, not a folder)
  for (const auto& rel : list_folder_files(directory, "", walk)) out.file_paths.push_back(join_path(directory, rel));
  if (o.labels() == "none") return;
  if (o.label_list().size() != out.file_paths.size())
    throw ConfigError("labels has " + std::to_string(o.label_list().size()) +
                      " entries, but the number of files found in " + directory + " is " +
                      std::to_string(out.file_paths.size()) + " (one label per file, in walk order)");
  out.labels = o.label_list();
  const std::set<int64_t> distinct(out.labels.begin(), out.labels.end());
  for (int64_t l : distinct) out.class_names.push_back(std::to_string(l));
}

template <typename T>
std::vector<T> slice_of(const std::vector<T>& v, size_t begin, size_t end) {
  if (v.empty()) return {};
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(end));
}

}  // namespace image_dataset_impl

using namespace image_dataset_impl;

void check_image_dataset_options(const ImageDatasetOptions& o) {
  if (o.labels() != "inferred" && o.labels() != "none" && o.labels() != "list")
    throw ConfigError("labels must be \"inferred\", \"none\" or a list of integer labels, got \"" + o.labels() + "\"");
  if (o.labels() != "inferred" && !o.class_names().empty())
    throw ConfigError("class_names can only be given with labels \"inferred\", got labels \"" + o.labels() + "\"");
  if (o.label_mode() != "int" && o.label_mode() != "categorical" && o.label_mode() != "binary" &&
      o.label_mode() != "none")
    throw ConfigError("label_mode must be \"int\", \"categorical\", \"binary\" or \"none\", got \"" + o.label_mode() +
                      "\"");
  parse_color_mode(o.color_mode());
  if (o.image_size()[0] < 1 || o.image_size()[1] < 1)
    throw ConfigError("image_size must be at least (1, 1), got (" + std::to_string(o.image_size()[0]) + ", " +
                      std::to_string(o.image_size()[1]) + ")");
  check_interpolation(o.interpolation());
  if (o.crop_to_aspect_ratio() && o.pad_to_aspect_ratio())
    throw ConfigError("only one of crop_to_aspect_ratio and pad_to_aspect_ratio can be true");
  if (o.batch_size() && *o.batch_size() < 1)
    throw ConfigError("batch_size must be >= 1 (or std::nullopt: unbatched, Keras's None), got " +
                      std::to_string(*o.batch_size()));
  skips_bad_images(o.on_bad_image());
  check_validation_split_arg(o);
  parse_sixteen_bit(o.sixteen_bit());
  ImageCache::check_max_bytes(o.cache_max_bytes());
}

ImageDatasetIndex index_image_directory(const std::string& directory, const ImageDatasetOptions& given) {
  ImageDatasetOptions o = given;
  if (o.label_mode() == "none" && o.labels() != "none") {  // Keras: label_mode None ⇒ labels None
    if (!o.class_names().empty())
      throw ConfigError("class_names cannot be given without labels (label_mode \"none\"), got " +
                        quoted_list(o.class_names()));
    o.labels("none");
  }
  ImageDatasetIndex out;
  out.seed = o.seed() ? *o.seed() : static_cast<int64_t>(std::random_device{}() % 1000000u);
  if (o.seed()) NumpyRandomState check(out.seed);  // the seed's range, before walking
  walk_dataset(directory, o, out);
  if (o.verbose()) {
    if (o.labels() == "none")
      std::cout << "Found " << out.file_paths.size() << " files." << std::endl;
    else
      std::cout << "Found " << out.file_paths.size() << " files belonging to " << out.class_names.size() << " classes."
                << std::endl;
  }
  if (o.shuffle()) {
    const std::vector<int64_t> order = numpy_shuffle_order(static_cast<int64_t>(out.file_paths.size()), out.seed);
    std::vector<std::string> paths(order.size());
    std::vector<int64_t> labels(out.labels.empty() ? 0 : order.size());
    for (size_t k = 0; k < order.size(); ++k) {
      paths[k] = out.file_paths[static_cast<size_t>(order[k])];
      if (!labels.empty()) labels[k] = out.labels[static_cast<size_t>(order[k])];
    }
    out.file_paths = std::move(paths);
    out.labels = std::move(labels);
  }
  return out;
}

ImageDatasetIndex training_or_validation_split(const ImageDatasetIndex& index, double validation_split,
                                               const std::string& subset, bool verbose) {
  if (validation_split == 0) return index;
  if (subset != "training" && subset != "validation")
    throw ConfigError("subset must be \"training\" or \"validation\" for the split, got \"" + subset + "\"");
  const size_t n = index.file_paths.size();
  const auto m = static_cast<size_t>(validation_split * static_cast<double>(n));
  if (m == 0 || m == n)
    throw ConfigError("validation_split " + decimal_text(validation_split) + " of " + std::to_string(n) +
                      " files gives " + std::to_string(m) + " validation files (int(" + decimal_text(validation_split) +
                      " * " + std::to_string(n) +
                      ")): one subset would be empty (Keras then hands every file to the other)");
  ImageDatasetIndex out;
  out.class_names = index.class_names;
  out.seed = index.seed;
  const size_t begin = subset == "training" ? 0 : n - m, end = subset == "training" ? n - m : n;
  out.file_paths = slice_of(index.file_paths, begin, end);
  out.labels = slice_of(index.labels, begin, end);
  if (verbose) std::cout << "Using " << end - begin << " files for " << subset << "." << std::endl;
  return out;
}

std::vector<int64_t> buffered_shuffle_order(int64_t n, int64_t buffer, uint64_t seed, int64_t pass) {
  if (n < 0 || pass < 0 || buffer < 1)
    throw IndexError("buffered_shuffle_order: n and pass must be >= 0 and buffer >= 1, got n " + std::to_string(n) +
                     ", pass " + std::to_string(pass) + ", buffer " + std::to_string(buffer));
  Rng rng(mix64(mix64(seed ^ 0x7F4A7C159E3779B9ull) ^ static_cast<uint64_t>(pass)));
  std::vector<int64_t> pool, out;
  out.reserve(static_cast<size_t>(n));
  int64_t next = 0;
  for (; next < std::min(n, buffer); ++next) pool.push_back(next);
  while (!pool.empty()) {
    const auto j = static_cast<size_t>(rng.below(pool.size()));
    out.push_back(pool[j]);
    if (next < n) {
      pool[j] = next++;
    } else {
      pool[j] = pool.back();
      pool.pop_back();
    }
  }
  return out;
}

// The label encoding, the label groups for replacing undecodable files, the resize, the batches and
// the worker ring.
struct ImageDataset::State {
  bool has_labels = false;
  ClassMode mode = ClassMode::sparse;
  int64_t num_classes = 0;  // encode_labels's range
  ColorMode color = ColorMode::rgb;
  std::vector<int64_t> groups;                      // per file: its label's position in the sorted labels
  std::vector<std::vector<int64_t>> group_samples;  // per group: its files, ascending
  std::vector<std::string> group_names;
  SixteenBit sixteen_bit = SixteenBit::high_byte;
  detail::ReplacedFiles replaced;
  std::unique_ptr<ImageCache> cache;  // options cache: the resized samples
  Resizing resize{nullptr};
  std::unique_ptr<BatchAssembler> assembler;
  std::unique_ptr<PrefetchRing> ring;
};

ImageDataset::ImageDataset(std::string directory, ImageDatasetIndex index, ImageDatasetOptions options, bool shuffle)
    : directory_(std::move(directory)),
      index_(std::move(index)),
      options_(std::move(options)),
      shuffle_(shuffle),
      state_(std::make_unique<State>()) {
  check_image_dataset_options(options_);
  State& s = *state_;
  s.color = parse_color_mode(options_.color_mode());
  s.sixteen_bit = parse_sixteen_bit(options_.sixteen_bit());
  s.has_labels = options_.label_mode() != "none" && options_.labels() != "none";
  if (s.has_labels && index_.labels.size() != index_.file_paths.size())
    throw ConfigError("ImageDataset: " + std::to_string(index_.labels.size()) + " labels for " +
                      std::to_string(index_.file_paths.size()) + " files");
  s.ring = std::make_unique<PrefetchRing>(
      [this](int64_t job) { return make_batch(job / batches_per_pass(), job % batches_per_pass()); },
      options_.workers(), options_.max_queue_size());
  drop_bad_files();
  if (options_.cache())
    s.cache = std::make_unique<ImageCache>(samples(), options_.cache_max_bytes(), directory_,
                                           "ImageDatasetOptions::cache_max_bytes");
  s.resize = Resizing(ResizingOptions(options_.image_size()[0], options_.image_size()[1])
                          .interpolation(lower_case(options_.interpolation()))
                          .crop_to_aspect_ratio(options_.crop_to_aspect_ratio())
                          .pad_to_aspect_ratio(options_.pad_to_aspect_ratio()));
  // Keras: shuffle_buffer_size = batch_size * 8, or 1024 unbatched.
  const int64_t n = samples(), buffer = options_.batch_size() ? 8 * *options_.batch_size() : 1024;
  const uint64_t seed = static_cast<uint64_t>(index_.seed);
  BatchAssembler::PassOrder order = [n, buffer, seed, shuffle](int64_t pass) {
    return shuffle ? buffered_shuffle_order(n, buffer, seed, pass) : pass_order(n, false, 0, pass);
  };
  s.assembler = std::make_unique<BatchAssembler>(
      n, batch_size(), image_shape(), order, static_cast<size_t>(options_.max_queue_size() + s.ring->threads() + 4));
}

ImageDataset::~ImageDataset() { state_->ring->stop(); }

// Header check of every file: bad ones are reported (on_bad_image) and left out; then the label groups.
void ImageDataset::drop_bad_files() {
  State& s = *state_;
  ImageFolderOptions check = walk_options(options_);
  const std::vector<std::string> reasons = check_image_files(index_.file_paths, check);
  ImageFolderListing bad;
  ImageDatasetIndex kept;
  kept.class_names = index_.class_names;
  kept.seed = index_.seed;
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (!reasons[i].empty()) {
      bad.skipped.push_back({index_.file_paths[i], reasons[i]});
      continue;
    }
    kept.file_paths.push_back(index_.file_paths[i]);
    if (!index_.labels.empty()) kept.labels.push_back(index_.labels[i]);
  }
  report_skipped_files(bad, options_.on_bad_image());
  skipped_ = bad.skipped;
  index_ = std::move(kept);
  if (index_.file_paths.empty())
    throw IoError("No images found in directory " + directory_ +
                  " (every file failed to decode). Allowed formats: " + kAllowedFormatsText);
  std::vector<int64_t> sorted = index_.labels;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) sorted.push_back(0);
  s.group_samples.assign(sorted.size(), {});
  for (size_t i = 0; i < index_.file_paths.size(); ++i) {
    const int64_t label = index_.labels.empty() ? 0 : index_.labels[i];
    const auto g = std::lower_bound(sorted.begin(), sorted.end(), label) - sorted.begin();
    s.groups.push_back(g);
    s.group_samples[static_cast<size_t>(g)].push_back(static_cast<int64_t>(i));
  }
  for (int64_t l : sorted) {
    const bool named = !index_.labels.empty() && options_.labels() == "inferred";
    s.group_names.push_back(named ? index_.class_names[static_cast<size_t>(l)] : std::to_string(l));
  }
  if (!s.has_labels) return;
  const std::string& m = options_.label_mode();
  s.mode = m == "categorical" ? ClassMode::categorical : m == "binary" ? ClassMode::binary : ClassMode::sparse;
  s.num_classes = static_cast<int64_t>(index_.class_names.size());
  if (s.mode == ClassMode::sparse) s.num_classes = std::max(s.num_classes, sorted.back() + 1);
  if (sorted.front() < 0 || sorted.back() >= s.num_classes)
    throw ConfigError("label " + std::to_string(sorted.front() < 0 ? sorted.front() : sorted.back()) +
                      " is outside 0.." + std::to_string(s.num_classes - 1) + " (label_mode \"" + m + "\" with " +
                      std::to_string(index_.class_names.size()) + " distinct labels)");
}

std::array<int64_t, 3> ImageDataset::image_shape() const {
  return {channels_of(state_->color), options_.image_size()[0], options_.image_size()[1]};
}

int64_t ImageDataset::cached_samples() const { return state_->cache ? state_->cache->cached_samples() : 0; }
int64_t ImageDataset::cache_bytes() const { return state_->cache ? state_->cache->bytes() : 0; }

void ImageDataset::load_sample(int64_t index, float* out) {
  State& s = *state_;
  if (s.cache && s.cache->read(index, out) != 0) return;  // the resized sample of an earlier load
  const bool skip = skips_bad_images(options_.on_bad_image());
  const detail::SampleGroups groups{index_.file_paths, s.groups, s.group_samples, s.group_names, directory_};
  const Image img = detail::decode_or_replace(index, groups, s.replaced, [&](const std::string& path, Image& dst) {
    try {
      dst = load_image(path, s.color, /*keep_gray=*/false, options_.max_image_pixels(), s.sixteen_bit);
      return true;
    } catch (const IoError& e) {
      if (!skip) throw;
      torchfit::logger().warn("{}", e.what());
      return false;
    }
  });
  at::Tensor hwc =
      at::from_blob(const_cast<uint8_t*>(img.pixels.data()), {img.height, img.width, img.channels}, at::kByte);
  // In float64, rounded once to float32: TensorFlow's float32 blending itself strays up to ~1.2e-4 (on
  // 0..255) from the exact value; this stays within float32's last bit of it.
  const at::Tensor x = hwc.permute({2, 0, 1}).unsqueeze(0).to(at::kDouble);
  const at::Tensor y = s.resize->forward(x).to(at::kFloat).contiguous();
  std::copy(y.data_ptr<float>(), y.data_ptr<float>() + y.numel(), out);
  if (s.cache && s.cache->claim(index))
    s.cache->store(index, out, static_cast<size_t>(y.numel()), channels_of(s.color));
}

Batch ImageDataset::make_batch(int64_t pass, int64_t batch_index) {
  if (pass < 0 || batch_index < 0 || batch_index >= batches_per_pass())
    throw IndexError("batch (pass " + std::to_string(pass) + ", index " + std::to_string(batch_index) +
                     ") is out of range: " + directory_ + " gives " + std::to_string(batches_per_pass()) +
                     " batches per pass");
  const std::atomic<bool>& stop = state_->ring->stopping();
  Batch b = state_->assembler->assemble(
      pass, batch_index, shard_rank(), shard_count(), pin_memory(),
      [this](int64_t index, int64_t, int64_t, float* out) { load_sample(index, out); }, &stop);
  if (stop.load(std::memory_order_relaxed)) return b;
  if (state_->has_labels) {
    std::vector<int64_t> labels(b.indices.size());
    for (size_t i = 0; i < labels.size(); ++i) labels[i] = index_.labels[static_cast<size_t>(b.indices[i])];
    b.y = encode_labels(state_->mode, labels, state_->num_classes, b.x, pin_memory());
  }
  if (unbatched() && b.x.defined()) {  // Keras's None: the element itself, without the batch axis
    b.x = b.x.squeeze(0);
    if (b.y.defined()) b.y = b.y.squeeze(0);
  }
  return b;
}

Batch ImageDataset::next() { return state_->ring->next(); }

void ImageDataset::reset() {
  state_->ring->seek(0);
  state_->assembler->forget_orders();
}

void ImageDataset::skip(int64_t batches) {
  check_skip(batches);
  const int64_t position = state_->ring->position();
  if (batches > kMaxPosition - position)
    throw IndexError("cannot skip " + std::to_string(batches) + " batches: the position would overflow");
  if (batches > 0) state_->ring->seek(position + batches);
}

void ImageDataset::shard(int64_t rank, int64_t world_size) {
  BatchIterator::shard(rank, world_size);
  state_->ring->seek(state_->ring->position());
}

nlohmann::json ImageDataset::preprocessing() const { return preprocessing_config(ImageDataGeneratorOptions()); }

std::map<std::string, int64_t> ImageDataset::class_indices() const {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < index_.class_names.size(); ++i) out[index_.class_names[i]] = static_cast<int64_t>(i);
  return out;
}

StreamConfig ImageDataset::stream_config() const {
  StreamConfig c = BatchIterator::stream_config();
  c["loader"] = "image_dataset";
  c["seed"] = std::to_string(index_.seed);
  c["shuffle"] = shuffle_ ? "true" : "false";
  c["target_size"] = std::to_string(options_.image_size()[0]) + "x" + std::to_string(options_.image_size()[1]);
  c["color_mode"] = options_.color_mode();
  c["interpolation"] = lower_case(options_.interpolation());
  c["label_mode"] = options_.label_mode();
  c["sixteen_bit"] = options_.sixteen_bit();  // checkpoints from before it lack the key: not compared then
  if (unbatched()) c["batch_size"] = "none";
  return c;
}

namespace image_dataset_impl {

// The checks, the index and the binary class count of both entry points.
ImageDatasetIndex checked_index(const std::string& directory, const ImageDatasetOptions& o) {
  check_image_dataset_options(o);
  ImageDatasetIndex index = index_image_directory(directory, o);
  if (o.label_mode() == "binary" && o.labels() != "none" && index.class_names.size() != 2)
    throw ConfigError("label_mode \"binary\" needs exactly 2 classes, got " + std::to_string(index.class_names.size()) +
                      ": " + quoted_list(index.class_names));
  return index;
}

void require_images(const ImageDatasetIndex& index, const std::string& directory, const std::string& which) {
  if (index.file_paths.empty())
    throw IoError("No " + which + "images found in directory " + directory +
                  ". Allowed formats: " + kAllowedFormatsText);
}

}  // namespace image_dataset_impl

std::unique_ptr<ImageDataset> image_dataset_from_directory(const std::string& directory,
                                                           const ImageDatasetOptions& options) {
  if (options.subset() == "both")
    throw ConfigError("subset \"both\" returns two datasets: call image_dataset_from_directory_both");
  const ImageDatasetIndex all = checked_index(directory, options);
  ImageDatasetIndex index =
      training_or_validation_split(all, options.validation_split(), options.subset(), options.verbose());
  require_images(index, directory, "");
  return std::make_unique<ImageDataset>(directory, std::move(index), options, options.shuffle());
}

std::pair<std::unique_ptr<ImageDataset>, std::unique_ptr<ImageDataset>> image_dataset_from_directory_both(
    const std::string& directory, const ImageDatasetOptions& options) {
  if (options.subset() != "both")
    throw ConfigError("image_dataset_from_directory_both needs subset \"both\", got \"" + options.subset() + "\"");
  const ImageDatasetIndex all = checked_index(directory, options);
  ImageDatasetIndex train =
      training_or_validation_split(all, options.validation_split(), "training", options.verbose());
  ImageDatasetIndex val =
      training_or_validation_split(all, options.validation_split(), "validation", options.verbose());
  require_images(train, directory, "training ");
  require_images(val, directory, "validation ");
  auto t = std::make_unique<ImageDataset>(directory, std::move(train), options, options.shuffle());
  auto v = std::make_unique<ImageDataset>(directory, std::move(val), options, false);
  return {std::move(t), std::move(v)};
}

}  // namespace torchfit::data
