// DirectoryIterator: Keras's flow_from_directory file discovery, plus worker threads that fill whole
// batches into a bounded ring of slots handed out in order.
#include <torchfit/data/directory_iterator.h>
#include <torchfit/error.h>

#include <torchfit/runtime/logging.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <set>
#include <system_error>

#include <atomic>

#include <condition_variable>

#include <mutex>

#include <thread>

#include <exception>

namespace torchfit::data {

namespace fs = std::filesystem;

namespace {

bool is_hidden(const std::string& name) { return name.empty() || name[0] == '.' || name == "__MACOSX"; }

bool has_image_extension(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  static const char* exts[] = {".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".tif", ".tiff"};
  for (const char* e : exts) {
    const size_t n = std::strlen(e);
    if (name.size() > n && name.compare(name.size() - n, n, e) == 0) return true;
  }
  return false;
}

bool is_dir(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_directory(ec);  // follows symlinks
}

bool is_symlink(const fs::directory_entry& e) {
  std::error_code ec;
  return e.is_symlink(ec);
}

// Collects (relative root, sorted image files) for every folder below `abs` (Keras's os.walk).
void walk(const fs::path& abs, const std::string& rel, bool follow_links, std::set<fs::path>& visited,
          std::vector<std::pair<std::string, std::vector<std::string>>>& out) {
  std::error_code ec;
  const fs::path canon = fs::canonical(abs, ec);
  if (!ec && !visited.insert(canon).second) {  // a link loop (Keras follows it until the path is too long)
    torchfit::logger().warn(
        "follow_links: '{}' leads to the folder '{}', already walked: not walked again (a link "
        "loop, or a second link to that folder)",
        abs.string(), canon.string());
    return;
  }
  std::vector<std::string> files;
  std::vector<std::pair<fs::path, std::string>> subdirs;
  for (fs::directory_iterator it(abs, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (is_hidden(name)) continue;
    if (is_dir(*it)) {
      if (is_symlink(*it) && !follow_links) continue;
      subdirs.emplace_back(it->path(), rel + "/" + name);
    } else if (has_image_extension(name)) {
      files.push_back(name);  // also a dangling link or a special file: the header check names and counts it
    }
  }
  if (ec) torchfit::logger().warn("cannot list {}: {}", abs.string(), ec.message());
  std::sort(files.begin(), files.end());
  out.emplace_back(rel, std::move(files));
  for (const auto& [p, r] : subdirs) walk(p, r, follow_links, visited, out);
}

std::vector<std::string> list_class_folders(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_hidden(name) && is_dir(*it)) names.push_back(name);
  }
  if (ec) throw IoError("cannot list directory " + dir.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  return names;
}

// Class names ordered by index, from a given class_indices map (every folder must be in it).
std::vector<std::string> names_from_class_indices(const ClassIndices& indices, const std::vector<std::string>& folders,
                                                  const std::string& directory) {
  std::vector<std::string> names(indices.size(), "");
  for (const auto& [name, idx] : indices) {
    if (idx < 0 || idx >= static_cast<int64_t>(names.size()) || !names[static_cast<size_t>(idx)].empty())
      throw ConfigError("class_indices must map the classes to 0.." + std::to_string(names.size() - 1) +
                        " without gaps or repeats (class \"" + name + "\" has " + std::to_string(idx) + ")");
    names[static_cast<size_t>(idx)] = name;
  }
  for (const auto& f : folders)
    if (!indices.count(f))
      throw ConfigError("folder \"" + f + "\" in " + directory +
                        " is not one of the given class_indices (a class the training data does not have)");
  return names;
}

// Class names ordered by index: class_indices, else classes (no repeats), else the sorted folders.
std::vector<std::string> resolve_class_names(const FlowOptions& o, const fs::path& dir, const std::string& directory) {
  const std::vector<std::string> folders = list_class_folders(dir);
  if (!o.class_indices().empty()) return names_from_class_indices(o.class_indices(), folders, directory);
  if (o.classes().empty()) return folders;
  std::set<std::string> seen;
  for (const auto& n : o.classes())
    if (!seen.insert(n).second) throw ConfigError("class \"" + n + "\" is listed twice in classes");
  return o.classes();
}

// Image files below `class_dir`, as "<class>/<sub>/<file>" in Keras order (folders sorted, files
// sorted in each folder).
std::vector<std::string> class_files(const fs::path& class_dir, const std::string& class_name, bool follow_links) {
  std::vector<std::pair<std::string, std::vector<std::string>>> roots;
  std::set<fs::path> visited;
  walk(class_dir, class_name, follow_links, visited, roots);
  std::sort(roots.begin(), roots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> files;
  for (const auto& [root, fnames] : roots)
    for (const auto& f : fnames) files.push_back(root + "/" + f);
  return files;
}

// [begin, end) of a class's n sorted files that `subset` keeps: validation = the first int(split·n).
std::pair<size_t, size_t> subset_range(size_t n, double split, const std::string& subset) {
  size_t begin = 0, end = n;
  if (split > 0) {
    const auto nval = static_cast<size_t>(split * static_cast<double>(n));
    if (subset == "validation")
      end = nval;
    else if (subset == "training")
      begin = nval;
  }
  return {begin, end};
}

// The subset's files (relative to the directory) and their class indices, class by class.
struct FileList {
  std::vector<std::string> files;
  std::vector<int64_t> classes;
};

FileList collect_files(const fs::path& dir, const std::vector<std::string>& names, const FlowOptions& o, double split,
                       const std::string& directory) {
  FileList out;
  std::error_code ec;
  for (size_t ci = 0; ci < names.size(); ++ci) {
    const fs::path class_dir = dir / names[ci];
    if (!fs::is_directory(class_dir, ec)) {
      torchfit::logger().warn("class \"{}\" has no folder in {}; it stays a class without images", names[ci],
                              directory);
      continue;
    }
    const std::vector<std::string> files = class_files(class_dir, names[ci], o.follow_links());
    if (files.empty()) torchfit::logger().warn("class folder {} holds no images; it stays a class", class_dir.string());
    const auto [begin, end] = subset_range(files.size(), split, o.subset());
    for (size_t i = begin; i < end; ++i) {
      out.files.push_back(files[i]);
      out.classes.push_back(static_cast<int64_t>(ci));
    }
  }
  return out;
}

// check_image_file for every file (empty = fine, else the reason), on up to `workers` threads
// (0 = all cores), one thread per 64 files at most.
std::vector<std::string> check_headers(const fs::path& dir, const std::vector<std::string>& files, int64_t workers,
                                       int64_t max_pixels) {
  std::vector<std::string> reasons(files.size());
  const size_t hw = std::max<unsigned>(1, std::thread::hardware_concurrency());
  const size_t nthreads =
      std::min(std::max<size_t>(1, workers > 0 ? static_cast<size_t>(workers) : hw), files.size() / 64 + 1);
  std::atomic<size_t> next{0};
  auto check = [&] {
    for (size_t i; (i = next.fetch_add(1)) < files.size();)
      reasons[i] = check_image_file((dir / files[i]).string(), max_pixels);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < nthreads; ++t) pool.emplace_back(check);
  check();
  for (auto& t : pool) t.join();
  return reasons;
}

}  // namespace

namespace detail {  // not anonymous: DirectoryIterator::State holds one

// Buffers of `bytes` bytes (64-byte aligned), handed out as tensor storage and taken back by the
// tensor's deleter. Locked once per batch, never per sample. At most `keep` idle buffers are kept.
class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  BufferPool(size_t bytes, size_t keep) : bytes_((bytes + 63) / 64 * 64), keep_(keep) {}
  ~BufferPool() {
    for (void* p : idle_) std::free(p);
  }
  // A float tensor of `sizes` (numel · 4 ≤ bytes) on a pooled buffer.
  at::Tensor tensor(at::IntArrayRef sizes) {
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lk(mutex_);
      if (!idle_.empty()) p = idle_.back(), idle_.pop_back();
    }
    if (!p) p = std::aligned_alloc(64, bytes_);
    if (!p) throw std::bad_alloc();
    auto self = shared_from_this();
    return at::from_blob(
        p, sizes, [self](void* q) { self->give_back(q); }, at::TensorOptions().dtype(at::kFloat));
  }

 private:
  void give_back(void* p) {
    {
      std::lock_guard<std::mutex> lk(mutex_);
      if (idle_.size() < keep_) return idle_.push_back(p);
    }
    std::free(p);
  }
  size_t bytes_, keep_;
  std::mutex mutex_;
  std::vector<void*> idle_;
};

}  // namespace detail

// A worker's buffers, reused from sample to sample.
struct DirectoryIterator::Scratch {
  std::vector<float> hwc, scratch;
};

// One sample's cached image: state kEmpty → kFilling (claimed by one worker) → kReady, or kRefused when the
// budget was spent.
struct DirectoryIterator::CacheSlot {
  std::atomic<uint8_t> state{0};
  uint8_t channels = 0;
  std::unique_ptr<uint8_t[]> pixels;
};

// The machinery behind the Keras iterator: the worker threads and the prefetch ring, their locks, the
// pass orders the workers share, the files that failed to decode in a worker, the batch buffer pool and
// the decoded-image cache.
struct DirectoryIterator::State {
  struct Slot {
    int64_t job = -1;
    bool ready = false;
    Batch batch;
    std::exception_ptr error;
  };

  // Files that failed to decode in a worker (skip policy): warned once, then replaced.
  std::mutex bad_mutex;
  std::set<int64_t> bad_at_runtime;
  std::atomic<int64_t> bad_count{0};  // size of bad_at_runtime: no lock per sample while it is 0

  // Memory of the batches' x tensors: a batch's buffer goes back to the pool when its last tensor is
  // freed (the pool outlives the iterator while tensors hold it), so steady state faults in no memory.
  std::shared_ptr<detail::BufferPool> buffers;

  // Decoded-image cache (FlowOptions::cache): samples() slots, or none.
  std::unique_ptr<CacheSlot[]> cache;
  std::atomic<int64_t> cache_bytes{0};
  std::atomic<int64_t> cached_samples{0};
  std::atomic<bool> cache_full_warned{false};

  // Pass orders, computed on demand and shared by the workers.
  std::mutex order_mutex;
  std::map<int64_t, std::shared_ptr<const std::vector<int64_t>>> orders;

  // Prefetch ring.
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Slot> slots;
  std::vector<std::thread> threads;
  int64_t next_job = 0;  // next batch job a worker will claim (global batch counter)
  int64_t consumed = 0;  // batches handed out by next()
  std::atomic<bool> stop{false};
};

DirectoryIterator::DirectoryIterator(const std::string& directory, FlowOptions options,
                                     std::shared_ptr<const ImageDataGenerator> generator)
    : directory_(directory),
      options_(std::move(options)),
      generator_(std::move(generator)),
      state_(std::make_unique<State>()) {
  const auto& o = options_;
  if (o.target_size()[0] < 1 || o.target_size()[1] < 1)
    throw ConfigError("target_size must be at least (1, 1), got (" + std::to_string(o.target_size()[0]) + ", " +
                      std::to_string(o.target_size()[1]) + ")");
  if (o.batch_size() < 1) throw ConfigError("batch_size must be >= 1, got " + std::to_string(o.batch_size()));
  if (o.max_queue_size() < 1)
    throw ConfigError("max_queue_size must be >= 1, got " + std::to_string(o.max_queue_size()));
  if (o.workers() < 0 || o.workers() > kMaxWorkers)
    throw ConfigError("workers must be in [0, " + std::to_string(kMaxWorkers) + "] (0 = all cores), got " +
                      std::to_string(o.workers()));
  color_mode_ = parse_color_mode(o.color_mode());
  sixteen_bit_ = parse_sixteen_bit(o.sixteen_bit());
  channels_ = channels_of(color_mode_);
  static const std::set<std::string> modes{"categorical", "sparse", "binary", "input", "none"};
  if (!modes.count(o.class_mode()))
    throw ConfigError("class_mode must be categorical, sparse, binary, input or none, got \"" + o.class_mode() + "\"");
  if (o.subset() != "" && o.subset() != "training" && o.subset() != "validation")
    throw ConfigError("subset must be \"training\", \"validation\" or empty, got \"" + o.subset() + "\"");
  if (o.on_bad_image() != "skip" && o.on_bad_image() != "error")
    throw ConfigError("on_bad_image must be \"skip\" or \"error\", got \"" + o.on_bad_image() + "\"");
  skip_bad_ = o.on_bad_image() == "skip";
  if (o.max_image_pixels() < 0)
    throw ConfigError("max_image_pixels must be >= 0 (0 = no limit), got " + std::to_string(o.max_image_pixels()));
  if (o.cache_max_bytes() < 1)
    throw ConfigError("cache_max_bytes must be >= 1 (bytes of cached image data), got " +
                      std::to_string(o.cache_max_bytes()));
  resize_image(Image{1, 1, 1, {0}}, 1, 1, o.interpolation());  // validates the name
  if (!generator_) generator_ = std::make_shared<const ImageDataGenerator>();
  if (o.subset() != "" && generator_->options().validation_split() == 0)
    throw ConfigError("subset \"" + o.subset() + "\" needs an ImageDataGenerator with validation_split > 0");
  augment_ = generator_->augments() && (o.subset() != "validation" || o.augment_validation());
  seed_ = o.seed() ? *o.seed() : (uint64_t(std::random_device{}()) << 32 | std::random_device{}());
  discover();
  if (o.cache()) state_->cache = std::make_unique<CacheSlot[]>(static_cast<size_t>(samples()));
  // Idle buffers kept: what the queue, the workers and the consumer hold at once, plus some slack.
  const int64_t threads = o.workers() > 0 ? o.workers() : std::max<int64_t>(1, std::thread::hardware_concurrency());
  state_->buffers = std::make_shared<detail::BufferPool>(
      static_cast<size_t>(o.batch_size() * channels_ * o.target_size()[0] * o.target_size()[1]) * sizeof(float),
      static_cast<size_t>(o.max_queue_size() + threads + 4));
}

DirectoryIterator::~DirectoryIterator() { stop_workers(); }

void DirectoryIterator::discover() {
  const auto& o = options_;
  const fs::path dir(directory_);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw IoError("image directory not found (or not a folder): " + directory_);
  const std::vector<std::string> names = resolve_class_names(o, dir, directory_);
  for (size_t i = 0; i < names.size(); ++i) class_indices_[names[i]] = static_cast<int64_t>(i);
  if (o.class_mode() == "binary" && names.size() != 2)
    throw ConfigError("class_mode \"binary\" needs exactly 2 classes, " + directory_ + " has " +
                      std::to_string(names.size()));
  // Validation split per class before any header check, so a bad file never moves the boundary.
  const FileList list = collect_files(dir, names, o, generator_->options().validation_split(), directory_);
  const std::vector<std::string> reasons = check_headers(dir, list.files, o.workers(), o.max_image_pixels());
  samples_of_class_.assign(names.size(), {});
  for (size_t i = 0; i < list.files.size(); ++i) {
    const std::string path = (dir / list.files[i]).string();
    if (!reasons[i].empty()) {
      if (!skip_bad_) throw IoError("unreadable image " + path + ": " + reasons[i]);
      torchfit::logger().warn("skipping unreadable image {}: {}", path, reasons[i]);
      skipped_.push_back({path, reasons[i]});
      continue;
    }
    samples_of_class_[static_cast<size_t>(list.classes[i])].push_back(static_cast<int64_t>(filenames_.size()));
    filenames_.push_back(list.files[i]);
    filepaths_.push_back(path);
    classes_.push_back(list.classes[i]);
  }
  if (o.verbose()) {
    std::cout << "Found " << filenames_.size() << " images belonging to " << names.size() << " classes.";
    if (!skipped_.empty()) std::cout << " Skipped " << skipped_.size() << " unreadable files.";
    std::cout << std::endl;
  }
  if (filenames_.empty())
    throw IoError("no images found in " + directory_ + (o.subset().empty() ? "" : " (subset " + o.subset() + ")") +
                  " (expected " + directory_ + "/<class>/<image>.png|jpg|jpeg|bmp|ppm|tif|tiff)");
}

int64_t DirectoryIterator::cached_samples() const { return state_->cached_samples.load(); }
int64_t DirectoryIterator::cache_bytes() const { return state_->cache_bytes.load(); }

std::vector<std::string> DirectoryIterator::class_names() const {
  std::vector<std::string> names(class_indices_.size());
  for (const auto& [n, i] : class_indices_) names[static_cast<size_t>(i)] = n;
  return names;
}

std::shared_ptr<const std::vector<int64_t>> DirectoryIterator::order_for_pass(int64_t pass) {
  std::lock_guard<std::mutex> lk(state_->order_mutex);
  auto it = state_->orders.find(pass);
  if (it != state_->orders.end()) return it->second;
  auto order = std::make_shared<const std::vector<int64_t>>(pass_order(samples(), options_.shuffle(), seed_, pass));
  state_->orders[pass] = order;
  while (state_->orders.size() > 4)
    state_->orders.erase(state_->orders.begin());  // workers hold shared_ptrs to what they use
  return order;
}

bool DirectoryIterator::decode_file(const std::string& path, Image& out) {
  try {
    // keep_gray: replicated in transform_into
    out = load_image(path, color_mode_, /*keep_gray=*/color_mode_ == ColorMode::rgb, options_.max_image_pixels(),
                     sixteen_bit_);
    return true;
  } catch (const IoError& e) {
    if (!skip_bad_) throw;
    torchfit::logger().warn("{}", e.what());
    return false;
  }
}

bool DirectoryIterator::is_bad(int64_t index) {
  if (state_->bad_count.load(std::memory_order_relaxed) == 0) return false;  // the common case: no lock
  std::lock_guard<std::mutex> lk(state_->bad_mutex);
  return state_->bad_at_runtime.count(index) > 0;
}

void DirectoryIterator::mark_bad(int64_t index, bool& first_time) {
  std::lock_guard<std::mutex> lk(state_->bad_mutex);
  first_time = state_->bad_at_runtime.insert(index).second;
  state_->bad_count.store(static_cast<int64_t>(state_->bad_at_runtime.size()), std::memory_order_relaxed);
}

Image DirectoryIterator::decode_sample(int64_t index) {
  Image img;
  bool ok = !is_bad(index) && decode_file(filepaths_[static_cast<size_t>(index)], img);
  if (ok) return img;
  // Skip policy: the file passed the header check but does not decode. Replace it by the next
  // readable file of the same class (the label stays right and the batch keeps its size).
  bool first_time = false;
  mark_bad(index, first_time);
  const auto& same = samples_of_class_[static_cast<size_t>(classes_[static_cast<size_t>(index)])];
  const auto pos = std::find(same.begin(), same.end(), index) - same.begin();
  for (size_t k = 1; k < same.size() && !ok; ++k) {
    const int64_t cand = same[(static_cast<size_t>(pos) + k) % same.size()];
    if (is_bad(cand)) continue;
    ok = decode_file(filepaths_[static_cast<size_t>(cand)], img);
    bool unused = false;
    if (!ok) {
      mark_bad(cand, unused);
    } else if (first_time) {
      torchfit::logger().warn("undecodable image {} is replaced by {} for the rest of the run",
                              filepaths_[static_cast<size_t>(index)], filepaths_[static_cast<size_t>(cand)]);
    }
  }
  if (!ok)
    throw IoError("no readable image left in class \"" +
                  class_names()[static_cast<size_t>(classes_[static_cast<size_t>(index)])] + "\" of " + directory_ +
                  " (last tried " + filepaths_[static_cast<size_t>(index)] + ")");
  return img;
}

namespace {
constexpr uint8_t kCacheEmpty = 0, kCacheFilling = 1, kCacheReady = 2, kCacheRefused = 3;
}  // namespace

void DirectoryIterator::cache_store(CacheSlot& slot, const Image& resized) {
  const auto bytes = static_cast<int64_t>(resized.pixels.size());
  const int64_t budget = options_.cache_max_bytes();
  if (state_->cache_bytes.fetch_add(bytes) + bytes > budget) {  // over budget: give the reservation back
    state_->cache_bytes.fetch_sub(bytes);
    slot.state.store(kCacheRefused, std::memory_order_release);
    if (!state_->cache_full_warned.exchange(true)) {
      // At the mean size of the samples cached so far (gray files are cached with one channel).
      const int64_t held = state_->cache_bytes.load(), n = state_->cached_samples.load();
      const double mean = n > 0 ? static_cast<double>(held) / static_cast<double>(n) : static_cast<double>(bytes);
      torchfit::logger().warn(
          "cache of {}: budget cache_max_bytes {} ({:.1f} MiB; train_cnn/prepare_data: --cache-max-mib) "
          "reached with {} of {} samples cached; the others are decoded on every pass (all of them would "
          "need about {} bytes = {:.1f} MiB)",
          directory_, budget, static_cast<double>(budget) / 1048576.0, n, samples(),
          static_cast<int64_t>(mean * static_cast<double>(samples())),
          mean * static_cast<double>(samples()) / 1048576.0);
    }
    return;
  }
  slot.pixels.reset(new uint8_t[resized.pixels.size()]);  // not zeroed: overwritten at once
  std::memcpy(slot.pixels.get(), resized.pixels.data(), resized.pixels.size());
  slot.channels = static_cast<uint8_t>(resized.channels);
  state_->cached_samples.fetch_add(1);
  slot.state.store(kCacheReady, std::memory_order_release);  // publishes pixels and channels
}

void DirectoryIterator::load_sample(int64_t index, int64_t pass, int64_t position, float* out, Scratch& s) {
  const int h = static_cast<int>(options_.target_size()[0]), w = static_cast<int>(options_.target_size()[1]);
  const size_t plane = static_cast<size_t>(h) * w;
  if (s.hwc.size() < plane * 4) s.hwc.resize(plane * 4), s.scratch.resize(plane * 4);  // up to 4 channels
  CacheSlot* slot = state_->cache ? &state_->cache[static_cast<size_t>(index)] : nullptr;
  int c = 0;
  if (slot && slot->state.load(std::memory_order_acquire) == kCacheReady) {
    c = slot->channels;  // Keras: resized BEFORE augmenting, so the cached image is the resized one
    const uint8_t* px = slot->pixels.get();
    for (size_t i = 0; i < plane * c; ++i) s.hwc[i] = px[i];
  } else {
    const Image img = decode_sample(index);
    c = img.channels;
    uint8_t expected = kCacheEmpty;
    if (slot && slot->state.compare_exchange_strong(expected, kCacheFilling, std::memory_order_acq_rel)) {
      const Image resized = resize_image(img, h, w, options_.interpolation());  // = resize_to_float's values
      cache_store(*slot, resized);
      for (size_t i = 0; i < resized.pixels.size(); ++i) s.hwc[i] = resized.pixels[i];
    } else {
      resize_to_float(img, h, w, options_.interpolation(), s.hwc.data());
    }
  }
  std::optional<TransformParams> p;
  if (augment_) {
    Rng rng(sample_seed(seed_, pass, position));
    p = generator_->get_random_transform(h, w, rng);
  }
  generator_->transform_into(s.hwc.data(), h, w, c, p ? &*p : nullptr, out, s.scratch.data(),
                             static_cast<int>(channels_));
}

void DirectoryIterator::check_batch_index(int64_t pass, int64_t batch_index) const {
  if (pass < 0) throw IndexError("pass must be >= 0, got " + std::to_string(pass));
  if (batch_index < 0 || batch_index >= batches_per_pass())
    throw IndexError("batch index " + std::to_string(batch_index) + " is out of range: " + directory_ + " gives " +
                     std::to_string(batches_per_pass()) + " batches per pass (indices 0.." +
                     std::to_string(batches_per_pass() - 1) + ")");
}

Batch DirectoryIterator::batch(int64_t index) {
  int64_t consumed;
  {
    std::lock_guard<std::mutex> lk(state_->mutex);
    consumed = state_->consumed;
  }
  check_batch_index(0, index);
  return make_batch(consumed / batches_per_pass(), index);
}

Batch DirectoryIterator::make_batch(int64_t pass, int64_t batch_index) {
  check_batch_index(pass, batch_index);
  const auto order = order_for_pass(pass);
  const int64_t bs = options_.batch_size();
  const int64_t start = batch_index * bs;
  const int64_t end = std::min(samples(), start + bs);
  const auto [lo, hi] = shard_range(end - start);  // data-parallel: this rank's part
  const int64_t m = hi - lo;
  const int64_t H = options_.target_size()[0], W = options_.target_size()[1];
  Batch b;
  // Pinned batches (CUDA fits) come from LibTorch's caching pinned-memory allocator, itself a pool.
  b.x = pin_memory() ? at::empty({m, channels_, H, W}, batch_options(at::kFloat))
                     : state_->buffers->tensor({m, channels_, H, W});
  b.indices.resize(static_cast<size_t>(m));
  float* x = b.x.data_ptr<float>();
  const int64_t per = channels_ * H * W;
  thread_local Scratch scratch;  // per thread, reused: no allocation (and no page faults) per sample
  for (int64_t i = 0; i < m; ++i) {
    if (state_->stop.load(std::memory_order_relaxed)) return b;
    const int64_t idx = (*order)[static_cast<size_t>(start + lo + i)];
    b.indices[static_cast<size_t>(i)] = idx;
    load_sample(idx, pass, start + lo + i, x + i * per, scratch);  // augmentation keyed by the pass position
  }
  if (shard_count() > 1) b.global_size = std::max<int64_t>(0, end - start);
  const std::string& mode = options_.class_mode();
  if (mode == "categorical") {
    b.y = at::zeros({m, num_classes()}, batch_options(at::kFloat));
    float* y = b.y.data_ptr<float>();
    for (int64_t i = 0; i < m; ++i)
      y[i * num_classes() + classes_[static_cast<size_t>(b.indices[static_cast<size_t>(i)])]] = 1.f;
  } else if (mode == "sparse") {
    b.y = at::empty({m}, batch_options(at::kLong));
    int64_t* y = b.y.data_ptr<int64_t>();
    for (int64_t i = 0; i < m; ++i) y[i] = classes_[static_cast<size_t>(b.indices[static_cast<size_t>(i)])];
  } else if (mode == "binary") {
    b.y = at::empty({m, 1}, batch_options(at::kFloat));
    float* y = b.y.data_ptr<float>();
    for (int64_t i = 0; i < m; ++i)
      y[i] = static_cast<float>(classes_[static_cast<size_t>(b.indices[static_cast<size_t>(i)])]);
  } else if (mode == "input") {
    b.y = b.x.clone();
  }
  return b;
}

void DirectoryIterator::start_workers() {
  if (!state_->threads.empty()) return;
  // The workers are the parallelism: keep OpenCV's own pool from oversubscribing the cores.
  cv::setNumThreads(1);
  state_->stop = false;
  state_->slots.assign(static_cast<size_t>(options_.max_queue_size()), State::Slot{});
  int64_t n = options_.workers();
  if (n == 0) n = std::max<unsigned>(1, std::thread::hardware_concurrency());
  for (int64_t i = 0; i < n; ++i) {
    try {
      state_->threads.emplace_back(&DirectoryIterator::worker_loop, this);
    } catch (const std::system_error& e) {
      stop_workers();
      throw IoError("cannot start loader thread " + std::to_string(i + 1) + " of " + std::to_string(n) +
                    " (workers=" + std::to_string(options_.workers()) + "): " + e.what());
    }
  }
}

void DirectoryIterator::stop_workers() {
  {
    std::lock_guard<std::mutex> lk(state_->mutex);
    state_->stop = true;
  }
  state_->cv.notify_all();
  for (auto& t : state_->threads) t.join();
  state_->threads.clear();
  state_->stop = false;
}

void DirectoryIterator::worker_loop() {
  const int64_t q = options_.max_queue_size();
  const int64_t bpp = batches_per_pass();
  for (;;) {
    int64_t job;
    {
      std::unique_lock<std::mutex> lk(state_->mutex);
      state_->cv.wait(lk, [&] { return state_->stop.load() || state_->next_job < state_->consumed + q; });
      if (state_->stop) return;
      job = state_->next_job++;
    }
    Batch batch;
    std::exception_ptr error;
    try {
      batch = make_batch(job / bpp, job % bpp);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lk(state_->mutex);
      if (state_->stop) return;
      State::Slot& s = state_->slots[static_cast<size_t>(job % q)];
      s.job = job;
      s.ready = true;
      s.batch = std::move(batch);
      s.error = error;
    }
    state_->cv.notify_all();
  }
}

Batch DirectoryIterator::next() {
  start_workers();
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lk(state_->mutex);
  const int64_t job = state_->consumed;
  State::Slot& s = state_->slots[static_cast<size_t>(job % options_.max_queue_size())];
  state_->cv.wait(lk, [&] { return s.ready && s.job == job; });
  Batch b = std::move(s.batch);
  std::exception_ptr error = s.error;
  s = State::Slot{};
  ++state_->consumed;
  lk.unlock();
  state_->cv.notify_all();
  if (error) std::rethrow_exception(error);
  b.wait_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

std::set<int64_t> DirectoryIterator::replaced_samples() {
  std::lock_guard<std::mutex> lock(state_->bad_mutex);
  return state_->bad_at_runtime;
}

StreamConfig DirectoryIterator::stream_config() const {
  StreamConfig c = BatchIterator::stream_config();
  c["seed"] = std::to_string(seed_);
  c["shuffle"] = options_.shuffle() ? "true" : "false";
  c["target_size"] = std::to_string(options_.target_size()[0]) + "x" + std::to_string(options_.target_size()[1]);
  c["color_mode"] = options_.color_mode();
  c["interpolation"] = options_.interpolation();
  c["class_mode"] = options_.class_mode();
  c["sixteen_bit"] = options_.sixteen_bit();  // checkpoints from before it lack the key: not compared then
  c["augmentation"] = generator_ ? options_text(generator_->options()) : "none";
  if (generator_ && generator_->augments() && !augment_)
    c["augmentation"] += " (validation subset: no random transforms)";
  return c;
}

void DirectoryIterator::skip(int64_t batches) {
  check_skip(batches);
  if (batches == 0) return;
  {  // refused before the workers stop, so a refused skip leaves the iterator as it was
    std::lock_guard<std::mutex> lk(state_->mutex);
    if (batches > kMaxPosition - state_->consumed)
      throw IndexError("cannot skip " + std::to_string(batches) + " batches: the position would overflow");
  }
  // Batches are a pure function of (seed, pass, position): skipping is moving the counter.
  stop_workers();
  std::lock_guard<std::mutex> lk(state_->mutex);
  state_->consumed += batches;
  state_->next_job = state_->consumed;
  state_->slots.clear();
}

void DirectoryIterator::shard(int64_t rank, int64_t world_size) {
  BatchIterator::shard(rank, world_size);
  stop_workers();  // prefetched batches hold other samples: build them again
  std::lock_guard<std::mutex> lk(state_->mutex);
  state_->next_job = state_->consumed;
  state_->slots.clear();
}

void DirectoryIterator::reset() {
  stop_workers();
  std::lock_guard<std::mutex> lk(state_->mutex);
  state_->next_job = 0;
  state_->consumed = 0;
  state_->slots.clear();
  std::lock_guard<std::mutex> lk2(state_->order_mutex);
  state_->orders.clear();
}

}  // namespace torchfit::data
