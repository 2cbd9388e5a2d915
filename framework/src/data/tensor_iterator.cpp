#include <torchfit/data/batch_iterator.h>

#include <ATen/Context.h>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/error.h>

#include <limits>

namespace torchfit::data {

TensorIterator::TensorIterator(at::Tensor x, at::Tensor y, int64_t batch_size, bool shuffle, uint64_t seed)
    : TensorIterator(Arrays(std::move(x), std::move(y)), batch_size, shuffle, seed) {}

TensorIterator::TensorIterator(const Arrays& arrays, int64_t batch_size, bool shuffle, uint64_t seed)
    : x_(arrays.x),
      y_(arrays.y),
      sample_weight_(arrays.sample_weight),
      more_x_(arrays.more_x),
      more_y_(arrays.more_y),
      batch_size_(batch_size),
      shuffle_(shuffle),
      seed_(seed) {
  if (batch_size_ <= 0) throw ConfigError("TensorIterator: batch_size must be > 0, got " + std::to_string(batch_size_));
  if (!x_.defined() || x_.dim() == 0 || x_.size(0) == 0) throw ConfigError("TensorIterator: x has no samples");
  auto check = [&](const at::Tensor& t, const char* name) {
    if (t.defined() && (t.dim() == 0 || t.size(0) != x_.size(0))) {
      throw ConfigError("TensorIterator: x has " + std::to_string(x_.size(0)) + " samples but " + name + " has " +
                        (t.dim() == 0 ? std::string("none (a scalar)") : std::to_string(t.size(0))));
    }
  };
  check(y_, "y");
  check(sample_weight_, "sample_weight");
  for (size_t i = 0; i < more_x_.size(); ++i) check(more_x_[i], ("x[" + std::to_string(i + 1) + "]").c_str());
  for (size_t i = 0; i < more_y_.size(); ++i) check(more_y_[i], ("y[" + std::to_string(i + 1) + "]").c_str());
  new_pass();
}

std::pair<BatchIterator::Ptr, BatchIterator::Ptr> TensorIterator::train_validation_split(double split) const {
  Arrays all(x_, y_, sample_weight_);
  all.more_x = more_x_;
  all.more_y = more_y_;
  const auto [train, val] = data::train_validation_split(all, split);
  return {std::make_unique<TensorIterator>(train, batch_size_, shuffle_, seed_),
          std::make_unique<TensorIterator>(val, batch_size_, false, 0)};
}

std::pair<BatchIterator::Ptr, BatchIterator::Ptr> BatchIterator::train_validation_split(double) const {
  throw ConfigError(
      "validation_split is only supported for in-memory arrays (fit on tensors, TensorIterator), as Keras's; "
      "give validation_data instead (an image folder splits itself: flow_from_directory's validation_split "
      "and subset)");
}

void TensorIterator::new_pass() {
  const int64_t n = x_.size(0);
  if (shuffle_) {
    auto gen =
        at::make_generator<at::CPUGeneratorImpl>(seed_ + 0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(pass_ + 1));
    order_ = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
  } else {
    order_ = at::arange(n, at::kLong);
  }
  pos_ = 0;
}

Batch TensorIterator::next() {
  if (pos_ >= x_.size(0)) {
    ++pass_;
    new_pass();
  }
  const int64_t end = std::min(pos_ + batch_size_, x_.size(0));
  const auto [lo, hi] = shard_range(end - pos_);
  auto idx = order_.slice(0, pos_ + lo, pos_ + hi);
  Batch b;
  if (shard_count() > 1) b.global_size = end - pos_;
  b.x = x_.index_select(0, idx);
  if (y_.defined()) b.y = y_.index_select(0, idx);
  if (sample_weight_.defined()) b.sample_weight = sample_weight_.index_select(0, idx);
  for (const auto& t : more_x_) b.more_x.push_back(t.index_select(0, idx));
  for (const auto& t : more_y_) b.more_y.push_back(t.index_select(0, idx));
  if (pin_memory() && b.x.device().is_cpu()) {  // in-memory tensors: the batch is copied once more, pinned
    b.x = b.x.pin_memory();
    if (b.y.defined()) b.y = b.y.pin_memory();
    if (b.sample_weight.defined()) b.sample_weight = b.sample_weight.pin_memory();
    for (auto* v : {&b.more_x, &b.more_y})
      for (auto& t : *v) t = t.pin_memory();
  }
  auto acc = idx.accessor<int64_t, 1>();
  for (int64_t i = 0; i < acc.size(0); ++i) b.indices.push_back(acc[i]);
  pos_ = end;
  return b;
}

StreamConfig TensorIterator::stream_config() const {
  StreamConfig c = BatchIterator::stream_config();
  c["shuffle"] = shuffle_ ? "true" : "false";
  if (!more_x_.empty() || !more_y_.empty()) {  // several inputs / targets: their count is part of the stream
    c["inputs"] = std::to_string(1 + more_x_.size());
    c["targets"] = std::to_string((y_.defined() ? 1 : 0) + more_y_.size());
  }
  if (shuffle_) c["seed"] = std::to_string(seed_);
  return c;
}

void TensorIterator::skip(int64_t batches) {
  check_skip(batches);
  if (batches == 0) return;
  const int64_t n = x_.size(0), bpp = batches_per_pass();
  const int64_t done = (pos_ + batch_size_ - 1) / batch_size_;  // batches of this pass taken (bpp at its end)
  if (batches > kMaxPosition - done || (batches + done - 1) / bpp > kMaxPosition - pass_)
    throw IndexError("cannot skip " + std::to_string(batches) + " batches: the position would overflow");
  // In O(1): the last skipped batch is batch (target − 1) % bpp of pass pass_ + (target − 1) / bpp.
  const int64_t target = done + batches;
  if ((target - 1) / bpp > 0) {
    pass_ += (target - 1) / bpp;
    new_pass();
  }
  pos_ = std::min(((target - 1) % bpp + 1) * batch_size_, n);
}

void BatchIterator::set_pin_memory(bool on) { pin_memory_ = on && at::hasCUDA(); }

void expect_batched(const BatchIterator& source, const std::string& who) {
  if (source.unbatched()) {
    throw ConfigError(who +
                      ": the data source is unbatched (batch_size None): its samples come without the batch "
                      "axis; give it a batch_size");
  }
}

void BatchIterator::shard(int64_t rank, int64_t world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ConfigError("shard: rank must be in [0, world_size), got rank " + std::to_string(rank) + " of " +
                      std::to_string(world_size));
  }
  shard_rank_ = rank;
  shard_count_ = world_size;
}

void TensorIterator::reset() {
  pass_ = 0;
  new_pass();
}

}  // namespace torchfit::data
