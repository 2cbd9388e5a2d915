// DirectoryIterator: Keras's flow_from_directory, composed of the listing (image_folder), the batch
// assembly and prefetch ring (prefetch_ring), the decoded-image cache (image_cache) and the label
// encoding (label_encoder). Its own part: the per-sample work and the replacement of undecodable files.
#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/label_encoder.h>
#include <torchfit/error.h>

#include <torchfit/runtime/logging.h>
#include <opencv2/core.hpp>
#include "data/replaced_files.h"

#include <algorithm>
#include <iostream>
#include <mutex>
#include <random>

namespace torchfit::data {

namespace {

// The FlowOptions checks that come before the listing, in the order the iterator has always made them
// (the workers and max_queue_size are checked by the PrefetchRing, the class mode by parse_class_mode).
void check_flow_options(const FlowOptions& o) {
  if (o.target_size()[0] < 1 || o.target_size()[1] < 1)
    throw ConfigError("target_size must be at least (1, 1), got (" + std::to_string(o.target_size()[0]) + ", " +
                      std::to_string(o.target_size()[1]) + ")");
  if (o.batch_size() < 1) throw ConfigError("batch_size must be >= 1, got " + std::to_string(o.batch_size()));
}

void check_flow_file_options(const FlowOptions& o) {
  if (o.subset() != "" && o.subset() != "training" && o.subset() != "validation")
    throw ConfigError("subset must be \"training\", \"validation\" or empty, got \"" + o.subset() + "\"");
  skips_bad_images(o.on_bad_image());
  if (o.max_image_pixels() < 0)
    throw ConfigError("max_image_pixels must be >= 0 (0 = no limit), got " + std::to_string(o.max_image_pixels()));
  ImageCache::check_max_bytes(o.cache_max_bytes());
  resize_image(Image{1, 1, 1, {0}}, 1, 1, o.interpolation());  // validates the name
}

}  // namespace

// A worker's buffers, reused from sample to sample.
struct DirectoryIterator::Scratch {
  std::vector<float> hwc, scratch;
};

// What the iterator composes: the label encoding in use, the files replaced so far, the cache (or
// none), the batch assembly (pass orders, buffer pool) and the worker ring.
struct DirectoryIterator::State {
  ClassMode class_mode = ClassMode::categorical;
  detail::ReplacedFiles replaced;
  std::unique_ptr<ImageCache> cache;
  std::unique_ptr<BatchAssembler> assembler;
  std::unique_ptr<PrefetchRing> ring;
};

DirectoryIterator::DirectoryIterator(const std::string& directory, FlowOptions options,
                                     std::shared_ptr<const ImageDataGenerator> generator)
    : directory_(directory),
      options_(std::move(options)),
      generator_(std::move(generator)),
      state_(std::make_unique<State>()) {
  const auto& o = options_;
  check_flow_options(o);
  state_->ring =
      std::make_unique<PrefetchRing>([this](int64_t job) { return make_job(job); }, o.workers(), o.max_queue_size());
  color_mode_ = parse_color_mode(o.color_mode());
  sixteen_bit_ = parse_sixteen_bit(o.sixteen_bit());
  channels_ = channels_of(color_mode_);
  state_->class_mode = parse_class_mode(o.class_mode());
  check_flow_file_options(o);
  skip_bad_ = skips_bad_images(o.on_bad_image());
  if (!generator_) generator_ = std::make_shared<const ImageDataGenerator>();
  if (o.subset() != "" && generator_->options().validation_split() == 0)
    throw ConfigError("subset \"" + o.subset() + "\" needs an ImageDataGenerator with validation_split > 0");
  augment_ = generator_->augments() && (o.subset() != "validation" || o.augment_validation());
  seed_ = o.seed() ? *o.seed() : (uint64_t(std::random_device{}()) << 32 | std::random_device{}());
  discover();
  if (o.cache()) state_->cache = std::make_unique<ImageCache>(samples(), o.cache_max_bytes(), directory_);
  // Idle buffers kept: what the queue, the workers and the consumer hold at once, plus some slack.
  state_->assembler =
      std::make_unique<BatchAssembler>(samples(), o.batch_size(), image_shape(), o.shuffle(), seed_,
                                       static_cast<size_t>(o.max_queue_size() + state_->ring->threads() + 4));
}

DirectoryIterator::~DirectoryIterator() { state_->ring->stop(); }

void DirectoryIterator::discover() {
  const auto& o = options_;
  const ImageFolderOptions folder = ImageFolderOptions()
                                        .classes(o.classes())
                                        .class_indices(o.class_indices())
                                        .validation_split(generator_->options().validation_split())
                                        .subset(o.subset())
                                        .follow_links(o.follow_links())
                                        .max_image_pixels(o.max_image_pixels())
                                        .workers(o.workers());
  const std::vector<std::string> names = list_image_classes(directory_, folder);
  for (size_t i = 0; i < names.size(); ++i) class_indices_[names[i]] = static_cast<int64_t>(i);
  check_class_count(state_->class_mode, static_cast<int64_t>(names.size()), directory_);
  // Validation split per class before any header check, so a bad file never moves the boundary.
  listing_ = list_image_files(directory_, names, folder);
  report_skipped_files(listing_, o.on_bad_image());
  samples_of_class_ = listing_.samples_of_class();
  if (o.verbose()) {
    std::cout << "Found " << listing_.filenames.size() << " images belonging to " << names.size() << " classes.";
    if (!listing_.skipped.empty()) std::cout << " Skipped " << listing_.skipped.size() << " unreadable files.";
    std::cout << std::endl;
  }
  if (listing_.filenames.empty())
    throw IoError("no images found in " + directory_ + (o.subset().empty() ? "" : " (subset " + o.subset() + ")") +
                  " (expected " + directory_ + "/<class>/<image>.png|jpg|jpeg|bmp|ppm|tif|tiff)");
}

int64_t DirectoryIterator::cached_samples() const { return state_->cache ? state_->cache->cached_samples() : 0; }
int64_t DirectoryIterator::cache_bytes() const { return state_->cache ? state_->cache->bytes() : 0; }

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

Image DirectoryIterator::decode_sample(int64_t index) {
  const detail::SampleGroups groups{listing_.filepaths, listing_.classes, samples_of_class_, listing_.class_names,
                                    directory_};
  return detail::decode_or_replace(index, groups, state_->replaced,
                                   [this](const std::string& path, Image& out) { return decode_file(path, out); });
}

void DirectoryIterator::load_sample(int64_t index, int64_t pass, int64_t position, float* out, Scratch& s) {
  const int h = static_cast<int>(options_.target_size()[0]), w = static_cast<int>(options_.target_size()[1]);
  const size_t plane = static_cast<size_t>(h) * w;
  if (s.hwc.size() < plane * 4) s.hwc.resize(plane * 4), s.scratch.resize(plane * 4);  // up to 4 channels
  ImageCache* cache = state_->cache.get();
  // Keras: resized BEFORE augmenting, so the cached image is the resized one.
  int c = cache ? cache->read(index, s.hwc.data()) : 0;
  if (c == 0) {
    const Image img = decode_sample(index);
    c = img.channels;
    if (cache && cache->claim(index)) {
      const Image resized = resize_image(img, h, w, options_.interpolation());  // = resize_to_float's values
      cache->store(index, resized);
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
  const int64_t consumed = state_->ring->position();
  check_batch_index(0, index);
  return make_batch(consumed / batches_per_pass(), index);
}

Batch DirectoryIterator::make_batch(int64_t pass, int64_t batch_index) {
  check_batch_index(pass, batch_index);
  const std::atomic<bool>& stop = state_->ring->stopping();
  Batch b = state_->assembler->assemble(
      pass, batch_index, shard_rank(), shard_count(), pin_memory(),
      [this](int64_t index, int64_t p, int64_t position, float* out) {
        thread_local Scratch scratch;  // per thread, reused: no allocation (and no page faults) per sample
        load_sample(index, p, position, out, scratch);
      },
      &stop);
  if (stop.load(std::memory_order_relaxed)) return b;  // a worker being stopped: the batch is dropped
  std::vector<int64_t> labels(b.indices.size());
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = listing_.classes[static_cast<size_t>(b.indices[i])];
  b.y = encode_labels(state_->class_mode, labels, num_classes(), b.x, pin_memory());
  return b;
}

Batch DirectoryIterator::make_job(int64_t job) {
  const int64_t bpp = batches_per_pass();
  return make_batch(job / bpp, job % bpp);
}

Batch DirectoryIterator::next() {
  // The workers are the parallelism: keep OpenCV's own pool from oversubscribing the cores.
  if (!state_->ring->running()) cv::setNumThreads(1);
  return state_->ring->next();
}

std::set<int64_t> DirectoryIterator::replaced_samples() { return state_->replaced.all(); }

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

nlohmann::json DirectoryIterator::preprocessing() const {
  return generator_ ? preprocessing_config(generator_->options()) : nlohmann::json(nullptr);
}

void DirectoryIterator::skip(int64_t batches) {
  check_skip(batches);
  if (batches == 0) return;
  // Refused before the workers stop, so a refused skip leaves the iterator as it was.
  const int64_t position = state_->ring->position();
  if (batches > kMaxPosition - position)
    throw IndexError("cannot skip " + std::to_string(batches) + " batches: the position would overflow");
  // Batches are a pure function of (seed, pass, position): skipping is moving the counter.
  state_->ring->seek(position + batches);
}

void DirectoryIterator::shard(int64_t rank, int64_t world_size) {
  BatchIterator::shard(rank, world_size);
  state_->ring->seek(state_->ring->position());  // prefetched batches hold other samples: build them again
}

void DirectoryIterator::reset() {
  state_->ring->seek(0);
  state_->assembler->forget_orders();
}

}  // namespace torchfit::data
