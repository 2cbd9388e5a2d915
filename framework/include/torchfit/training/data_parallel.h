#pragma once
/// @file data_parallel.h
/// DataParallel — everything data-parallel of one fit() (tf.distribute's MultiWorkerMirroredStrategy,
/// torch's DistributedDataParallel): the agreement of the ranks, the shards of the sources, rank 0's
/// weights on every rank, the gradient reducer, the reduced step and evaluation sums and the agreed stop
/// after an interrupt. Trainer::fit holds one while FitOptions::process_group is set and calls it at the
/// named points below; nothing of it is in the loop itself.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/data/batch_iterator.h>

namespace torchfit {

namespace distributed {
class ProcessGroup;
class GradientReducer;
}  // namespace distributed
class Trainer;
struct FitOptions;

/// ConfigError unless `batch_size`, the global batch, splits evenly over `world_size` processes:
/// "<what> 7 is the global batch and must split evenly over <processes> (use a multiple of 2)" — fit()
/// says "fit: the batch size" and "the 2 processes"; train_cnn checks its flag before the rendezvous.
void check_global_batch(int64_t batch_size, int world_size, const std::string& what, const std::string& processes);

/// One data-parallel fit() over `group`. Constructed before fit() reads a checkpoint (so that resume
/// checks see the world size), started after. Destroying it removes the reducer's hooks and makes the
/// sources whole again (shard(0, 1)), however fit() ends.
class DataParallel {
 public:
  DataParallel(std::shared_ptr<distributed::ProcessGroup> group, data::BatchIterator& train,
               data::BatchIterator* validation);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const;
  int world_size() const;

  /// Before the first step: checks that every rank was started alike (the data streams and their
  /// files, the schedule and resume position, the resumed weights, the model, loss, optimizer and
  /// learning rate; all ranks fail together, each naming what differs on it), then shards the sources,
  /// broadcasts rank 0's weights and buffers, attaches the gradient reducer and gives each rank its own
  /// dropout stream derived from the shared one. `data` is the training stream's settings (with the
  /// world size), `steps` the steps per epoch. Errors: ConfigError naming the differing settings,
  /// CommunicationError.
  void start(Trainer& trainer, const data::StreamConfig& data, const FitOptions& options, int64_t steps);

  /// Before backward: zeroes the reducer's gradient buffer (the gradients are views into it).
  void zero_grad();
  /// After backward: waits for the gradient allreduce; returns the wait in ms.
  double finish_gradients();
  /// The factor on this shard's loss so that the summed gradients are the global batch's mean:
  /// shard size / global batch size (`global` 0 ⇒ 1).
  static double loss_share(int64_t shard, int64_t global);

  /// The global values of a step: `loss` (this shard's mean → the global mean), `sums` (metric sums)
  /// and `n` (shard size → global batch size), summed over the ranks together with whether any rank
  /// was interrupted (interrupted()). Adds the wait to `allreduce_ms`.
  void reduce_step(double& loss, std::vector<double>& sums, int64_t& n, double& allreduce_ms);
  /// Whether some rank was interrupted (runtime::interrupt_signal) before the last reduce_step: every
  /// rank then stops after the same step.
  bool interrupted() const { return interrupted_; }
  /// The signal that interrupted (runtime::interrupt_signal: SIGINT, SIGTERM, SIGHUP): this rank's own, else
  /// the interrupted peers' (SIGINT when they differ); 0 before any interrupt.
  int interrupt_signal() const { return interrupt_signal_; }
  /// Sums an evaluation's `loss_sum`, `seen` and `metric_sums` over the ranks.
  void reduce_sums(double& loss_sum, int64_t& seen, std::vector<double>& metric_sums);

  /// {"world_size", "backend", "timeout_s", and once started "gradient_buckets", "gradient_bytes",
  /// "gradient_compression" (none, bf16, fp16), "gradient_wire_bytes" (bytes per rank handed to the collectives)}.
  nlohmann::json info() const;

 private:
  void check_ranks_agree(Trainer& trainer, const data::StreamConfig& data, const FitOptions& options, int64_t steps);
  std::shared_ptr<distributed::ProcessGroup> group_;
  std::shared_ptr<distributed::GradientReducer> reducer_;
  data::BatchIterator& train_;
  data::BatchIterator* validation_;
  bool interrupted_ = false;
  int interrupt_signal_ = 0;
};

}  // namespace torchfit
