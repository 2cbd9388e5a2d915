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
#include <string>
#include <vector>

namespace torchfit::distributed {

class ProcessGroup;

/// How gradients travel between the ranks (GradientReducerOptions::compression).
/// - none: float32 allreduce (sum) of the gradient buffer.
/// - bf16 / fp16: PyTorch DDP's bf16_compress_hook / fp16_compress_hook: each rank's gradient (already
///   its share of the mean: the loss is scaled by shard / global batch, DDP's division by the world
///   size) is rounded to bfloat16 / float16 (round to nearest even), the compressed values are summed
///   in float32 and the sum rounded once more, then cast back into the float32 gradient. Half the
///   bytes on the wire; each element is bf16(Σ_r float32(bf16(g_r))) with the sum taken in rank order.
///   Done as a reduce-scatter (alltoall of 1/world_size slices; each rank sums its slice) and an
///   all-gather (one broadcast per slice owner): the 2(N−1)/N × bytes of a ring allreduce, half of them.
///   Gloo in LibTorch 1.13 has no bfloat16 allreduce and sums float16 element by element at a fraction
///   of the speed, so no backend reduction is used. CPU gradients only.
enum class GradientCompression { none, bf16, fp16 };

/// "none", "bf16", "fp16" → the value. Errors: ConfigError "<what> 'x' is not one of none, bf16, fp16".
GradientCompression parse_gradient_compression(const std::string& name, const std::string& what);
/// The name parse_gradient_compression accepts.
std::string to_string(GradientCompression compression);

/// Options of GradientReducer.
struct GradientReducerOptions {
  /// Bucket size in bytes (DDP's bucket_cap_mb = 25).
  int64_t bucket_bytes = 25 * 1024 * 1024;
  /// The wire format of the gradients (default: float32).
  GradientCompression compression = GradientCompression::none;
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
  /// step), in bucket order, and waits for all. The gradients are then the sums over the ranks (with
  /// compression: the rounded sums of the rounded gradients, GradientCompression; scale
  /// the loss so that they are the means). Returns the time spent waiting, in milliseconds.
  /// Errors: CommunicationError.
  double finish();

  int64_t buckets() const;
  /// Bytes of gradient in the buffer.
  int64_t bytes() const;
  /// Bytes each rank hands to the collectives per step (the buffer's, or half of it compressed, padded
  /// to whole slices).
  int64_t wire_bytes() const;
  GradientCompression compression() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;  // shared with the autograd hooks (they hold a weak reference)
};

}  // namespace torchfit::distributed
