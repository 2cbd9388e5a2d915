#pragma once
/// @file batch_iterator.h
/// The contract between data sources and the trainer: an endless stream of batches in passes.
#include <ATen/ATen.h>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/data/arrays.h>
#include <torchfit/error.h>

namespace torchfit::data {

/// One batch. Shapes: images (N, C, H, W) float32; labels depend on class_mode (categorical: (N, K)
/// float32 one-hot; sparse: (N) int64; binary: (N, 1) float32; input: the images; none: undefined).
struct Batch {
  at::Tensor x;
  at::Tensor y;
  /// Each sample's loss weight (N) or (N, ...), float32 (Keras's sample_weight); undefined = 1 each.
  at::Tensor sample_weight;
  /// Inputs 2… and targets 2… of a model with several inputs / outputs (Keras's fit(x=[a, b], y=[c, d])),
  /// in the model's input / output order: x and y are the first. Empty for one input / output.
  std::vector<at::Tensor> more_x, more_y;
  /// Positions of the samples in the source's file list (filenames()[index]).
  std::vector<int64_t> indices;
  /// Time this next() call spent blocked waiting for the batch (ms): the "data wait" of step timing.
  double wait_ms = 0.0;
  /// Samples of the whole batch this one is a shard of (BatchIterator::shard); 0 = not sharded (size()).
  int64_t global_size = 0;
  int64_t size() const { return x.defined() ? x.size(0) : 0; }
  /// Every input {x, more_x…} / target {y, more_y…} (empty where x / y is undefined).
  std::vector<at::Tensor> inputs() const { return all_of(x, more_x); }
  std::vector<at::Tensor> targets() const { return all_of(y, more_y); }

 private:
  static std::vector<at::Tensor> all_of(const at::Tensor& first, const std::vector<at::Tensor>& more) {
    if (!first.defined()) return {};
    std::vector<at::Tensor> all{first};
    all.insert(all.end(), more.begin(), more.end());
    return all;
  }
};

/// [begin, end) of shard `rank` of `count` within a batch of `m` samples: [m·rank/count, m·(rank+1)/count)
/// (BatchIterator::shard; the shards of the ranks together are the whole batch, in order).
inline std::pair<int64_t, int64_t> shard_bounds(int64_t m, int64_t rank, int64_t count) {
  return {m * rank / count, m * (rank + 1) / count};
}

/// Setting name → value (as text) of a batch source's data stream; see BatchIterator::stream_config.
using StreamConfig = std::map<std::string, std::string>;

/// An endless source of batches, organised in passes of ceil(samples / batch_size) batches; the last
/// batch of a pass is partial. next() never ends: after the last batch of a pass the next pass starts
/// (re-shuffled when the source shuffles). Implementations: DirectoryIterator (image folders) and
/// TensorIterator (in-memory tensors).
class BatchIterator {
 public:
  virtual ~BatchIterator() = default;
  /// The next batch (blocks until ready). Errors: propagates a worker's failure (e.g. a bad image with
  /// on_bad_image = error) as torchfit::IoError naming the file.
  virtual Batch next() = 0;
  /// Number of samples in one pass.
  virtual int64_t samples() const = 0;
  virtual int64_t batch_size() const = 0;
  /// Batches in one pass: ceil(samples / batch_size).
  int64_t batches_per_pass() const { return (samples() + batch_size() - 1) / batch_size(); }
  /// Restarts at the beginning of pass 0 (same order as a fresh iterator with the same seed).
  virtual void reset() = 0;
  /// Advances by `batches` batches as if next() had been called that often (for resuming a run at
  /// the same position). Default: calls next(); sources that can seek override it. Errors: IndexError
  /// when batches < 0 (an iterator does not go back; reset() restarts it).
  virtual void skip(int64_t batches) {
    check_skip(batches);
    for (int64_t i = 0; i < batches; ++i) next();
  }
  /// Class name → index (empty when the source has no classes).
  virtual std::map<std::string, int64_t> class_indices() const { return {}; }
  /// File path of each sample (empty for in-memory sources).
  virtual std::vector<std::string> filenames() const { return {}; }
  /// The settings that decide which samples come in which batches, in which order and with which
  /// augmentation (name → value as text: "batch_size", "samples", "seed", "shuffle", ...). A resumed run
  /// continues exactly only when its source gives the same (Trainer's resume checks it). Default: batch
  /// size and samples.
  virtual StreamConfig stream_config() const {
    return {{"batch_size", std::to_string(batch_size())}, {"samples", std::to_string(samples())}};
  }
  /// The deterministic input preprocessing every sample gets after its (random) augmentation, which a
  /// model trained on this source needs at inference too, in Keras names: {"rescale": F,
  /// "samplewise_center": B, "samplewise_std_normalization": B} for an image folder
  /// (data::preprocessing_config). Saved in checkpoints (CheckpointInfo::preprocessing); null (default)
  /// when the source feeds its values as they are.
  virtual nlohmann::json preprocessing() const { return nullptr; }
  /// True for a source whose next() gives one sample without the batch axis (Keras's batch_size=None,
  /// data::ImageDataset); fit, evaluate and predict refuse it (expect_batched). Default false.
  virtual bool unbatched() const { return false; }

  /// Keras's validation_split: a source over the first floor(samples · (1 − validation_split)) samples
  /// (shuffled as this one) and one over the rest (in order), both with this batch size; this source is
  /// left as it is. Default: refused — as Keras, only in-memory arrays split (TensorIterator; an image
  /// folder has its own, per class: FlowOptions::validation_split and subset).
  /// Errors: ConfigError saying so (default), or data::train_validation_split's.
  using Ptr = std::unique_ptr<BatchIterator>;
  virtual std::pair<Ptr, Ptr> train_validation_split(double validation_split) const;

  /// Data-parallel runs (tf.distribute semantics): from the next batch on, next() returns only shard
  /// `rank` of `world_size` of each batch — samples [m·rank/world_size, m·(rank+1)/world_size) of a batch
  /// of m — while batch_size(), samples(), the order of every pass and the augmentation (keyed by the
  /// sample's position in the pass) stay those of the whole stream: the ranks together read exactly
  /// what one process reads. Batch::global_size is m. Errors: ConfigError for a rank outside
  /// [0, world_size). Sources override it to drop batches they prefetched (and call this one).
  virtual void shard(int64_t rank, int64_t world_size);
  int64_t shard_rank() const { return shard_rank_; }
  int64_t shard_count() const { return shard_count_; }

  /// Batches in page-locked (pinned) host memory, so that a non_blocking copy to a CUDA GPU runs
  /// asynchronously (PyTorch DataLoader's pin_memory). Default off; Trainer::fit turns it on for the
  /// training and validation sources of a CUDA run. Has no effect (stays off) when LibTorch has no
  /// usable GPU: pinning needs the CUDA driver. Takes effect for batches made after the call.
  void set_pin_memory(bool on);
  bool pin_memory() const { return pin_memory_; }

 protected:
  /// Options for a batch tensor of `dtype`: CPU, pinned when pin_memory().
  at::TensorOptions batch_options(at::ScalarType dtype) const {
    return at::TensorOptions().dtype(dtype).pinned_memory(pin_memory_);
  }
  /// The largest batch or pass count a position may reach (a quarter of int64's range: sums of a few
  /// such counts cannot overflow).
  static constexpr int64_t kMaxPosition = std::numeric_limits<int64_t>::max() / 4;
  /// IndexError for a negative skip count.
  static void check_skip(int64_t batches) {
    if (batches < 0)
      throw IndexError("cannot skip " + std::to_string(batches) +
                       " batches: the count must be >= 0 (reset() goes back to the start)");
  }
  /// [begin, end) of this rank's shard within a batch of `m` samples.
  std::pair<int64_t, int64_t> shard_range(int64_t m) const { return shard_bounds(m, shard_rank_, shard_count_); }

 private:
  int64_t shard_rank_ = 0;
  int64_t shard_count_ = 1;
  bool pin_memory_ = false;
};

/// Throws ConfigError naming `who` ("fit", "evaluate", "predict") when `source` is unbatched: the training
/// loop's steps are batches (N, ...), as Keras's fit needs a batched dataset.
void expect_batched(const BatchIterator& source, const std::string& who);

/// In-memory source over tensors x (N, ...), y (N, ...) and optionally sample_weight (N, ...) (data::Arrays,
/// with its further inputs and targets for a model with several), in order or shuffled per pass with `seed`
/// (each sample keeps its targets and weight).
/// Errors: ConfigError for batch_size <= 0, x without samples, or y/sample_weight of another length.
class TensorIterator : public BatchIterator {
 public:
  TensorIterator(at::Tensor x, at::Tensor y, int64_t batch_size, bool shuffle = false, uint64_t seed = 0);
  TensorIterator(const Arrays& arrays, int64_t batch_size, bool shuffle = false, uint64_t seed = 0);
  Batch next() override;
  int64_t samples() const override { return x_.size(0); }
  int64_t batch_size() const override { return batch_size_; }
  void reset() override;
  void skip(int64_t batches) override;
  /// Batch size, samples, shuffle and seed.
  StreamConfig stream_config() const override;
  /// data::train_validation_split of the arrays (the last fraction validates, in order; the first part
  /// shuffles as this source, with its seed).
  std::pair<Ptr, Ptr> train_validation_split(double validation_split) const override;

 private:
  void new_pass();
  at::Tensor x_, y_, sample_weight_;
  std::vector<at::Tensor> more_x_, more_y_;
  int64_t batch_size_;
  bool shuffle_;
  uint64_t seed_;
  int64_t pass_ = 0;
  int64_t pos_ = 0;
  at::Tensor order_;
};

}  // namespace torchfit::data
