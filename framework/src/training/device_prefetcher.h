#pragma once
// Private to framework/src/training: moves the next batch to the training device while the current step
// computes (CUDA), so the step does not wait for its host → device copy.
#include <memory>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <torchfit/data/batch_iterator.h>

namespace torchfit::detail {

/// A batch on the training device, with the sizes the step logs.
struct DeviceBatch {
  at::Tensor x, y;
  at::Tensor sample_weight;                ///< (N) or undefined (data::Batch::sample_weight)
  int64_t size = 0;                        ///< samples in this (shard of the) batch
  int64_t global_size = 0;                 ///< samples in the whole batch (data-parallel), else 0
  std::vector<at::Tensor> more_x, more_y;  ///< data::Batch's further inputs and targets
  std::vector<at::Tensor> inputs() const { return as_batch().inputs(); }
  std::vector<at::Tensor> targets() const { return as_batch().targets(); }
  static DeviceBatch of(const data::Batch& b) {
    return {b.x, b.y, b.sample_weight, b.size(), b.global_size, b.more_x, b.more_y};
  }
  /// The batch as data::Batch (its tensors on the device; no sample indices).
  data::Batch as_batch() const {
    data::Batch b;
    b.x = x;
    b.y = y;
    b.sample_weight = sample_weight;
    b.more_x = more_x;
    b.more_y = more_y;
    b.global_size = global_size;
    return b;
  }
  /// Applies `f` (Tensor → Tensor) to every defined tensor of the batch.
  template <typename F>
  void each(F&& f) {
    for (at::Tensor* t : {&x, &y, &sample_weight})
      if (t->defined()) *t = f(*t);
    for (auto* v : {&more_x, &more_y})
      for (auto& t : *v)
        if (t.defined()) t = f(t);
  }
};

/// On CUDA, start() copies a batch on a side stream (non_blocking: asynchronous from pinned memory) and
/// records an event; take() makes the compute stream wait for that event and hands the batch over.
/// On the CPU both are plain hand-overs. One batch in flight at a time.
class DevicePrefetcher {
 public:
  explicit DevicePrefetcher(c10::Device device);
  ~DevicePrefetcher();
  DevicePrefetcher(const DevicePrefetcher&) = delete;
  DevicePrefetcher& operator=(const DevicePrefetcher&) = delete;

  /// True on CUDA: copies overlap the previous step, so the trainer starts the next batch early.
  bool asynchronous() const;
  bool pending() const { return pending_; }
  /// Starts moving `batch` to the device. Errors: std::logic_error when a batch is already pending.
  void start(data::Batch batch);
  /// The pending batch on the device, ready for the current stream (which waits for the copy's event;
  /// the host does not: Trainer::run_step's device synchronisation is what times the copy). Errors:
  /// std::logic_error when none is pending.
  DeviceBatch take();
  /// Drops a pending batch (the end of fit()).
  void clear();

 private:
  struct Cuda;
  c10::Device device_;
  std::unique_ptr<Cuda> cuda_;  // CUDA builds on a CUDA device only
  DeviceBatch batch_;
  bool pending_ = false;
};

}  // namespace torchfit::detail
