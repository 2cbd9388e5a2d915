#pragma once
/// @file gradient_reducer.h
/// GradientReducer — what PyTorch's DistributedDataParallel does for gradients, for a LibTorch model:
/// the gradients live as views into one flat buffer per dtype/device; the buffer is cut into buckets
/// (~25 MB, in reverse parameter order, the order backward produces them), and each bucket's
/// asynchronous allreduce (sum) starts as soon as backward has accumulated all its gradients, so
/// communication overlaps the rest of backward. finish() waits for all of them before the optimizer step.
#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace torchfit::distributed {

class ProcessGroup;

/// Options of GradientReducer.
struct GradientReducerOptions {
  /// Bucket size in bytes (DDP's bucket_cap_mb = 25).
  int64_t bucket_bytes = 25 * 1024 * 1024;
};

class GradientReducer {
 public:
  /// Takes over the gradients of `parameters` (those that require grad): each .grad() becomes a view
  /// into the flat buffer, and an autograd hook on each parameter marks its bucket ready. Every rank
  /// must pass the same parameters in the same order (same model).
  GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<at::Tensor> parameters,
                  GradientReducerOptions options = {});
  /// Removes the hooks; the gradients stay (as views into the buffer, which they keep alive).
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Zeroes the gradient buffer (instead of Optimizer::zero_grad, which cannot detach views) and
  /// re-arms the buckets. Call before each backward.
  void zero_grad();
  /// After backward: starts the buckets backward did not complete (parameters without a gradient this
  /// step), in bucket order, and waits for all. The gradients are then the sums over the ranks (scale
  /// the loss so that they are the means). Returns the time spent waiting, in milliseconds.
  /// Errors: CommunicationError.
  double finish();

  int64_t buckets() const;
  /// Bytes of gradient in the buffer.
  int64_t bytes() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the autograd hooks (they hold a weak reference)
};

}  // namespace torchfit::distributed
