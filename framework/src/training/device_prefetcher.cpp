#include "training/device_prefetcher.h"

#include <stdexcept>

#ifdef TORCHFIT_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace torchfit::detail {

#ifdef TORCHFIT_WITH_CUDA
struct DevicePrefetcher::Cuda {
  c10::cuda::CUDAStream side;
  at::cuda::CUDAEvent copied;
  explicit Cuda(const c10::Device& d) : side(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, d.index())) {}
};
#else
struct DevicePrefetcher::Cuda {};
#endif

DevicePrefetcher::DevicePrefetcher(c10::Device device) : device_(device) {
#ifdef TORCHFIT_WITH_CUDA
  if (device_.is_cuda()) {
    if (!device_.has_index()) device_ = c10::Device(c10::kCUDA, 0);
    cuda_ = std::make_unique<Cuda>(device_);
  }
#endif
}

DevicePrefetcher::~DevicePrefetcher() = default;

bool DevicePrefetcher::asynchronous() const { return cuda_ != nullptr; }

void DevicePrefetcher::start(data::Batch batch) {
  if (pending_) throw std::logic_error("DevicePrefetcher::start: a batch is already pending");
  batch_ = DeviceBatch{batch.x, batch.y, batch.sample_weight, batch.size(), batch.global_size};
  pending_ = true;
#ifdef TORCHFIT_WITH_CUDA
  if (!cuda_) return;
  c10::cuda::CUDAStreamGuard on_side(cuda_->side);
  if (batch_.x.defined()) batch_.x = batch_.x.to(device_, /*non_blocking=*/true);
  if (batch_.y.defined()) batch_.y = batch_.y.to(device_, /*non_blocking=*/true);
  if (batch_.sample_weight.defined()) batch_.sample_weight = batch_.sample_weight.to(device_, /*non_blocking=*/true);
  cuda_->copied.record(cuda_->side);
#else
  if (!device_.is_cpu()) {  // a non-CPU device in a build without CUDA code: plain copies
    if (batch_.x.defined()) batch_.x = batch_.x.to(device_);
    if (batch_.y.defined()) batch_.y = batch_.y.to(device_);
    if (batch_.sample_weight.defined()) batch_.sample_weight = batch_.sample_weight.to(device_);
  }
#endif
}

DeviceBatch DevicePrefetcher::take() {
  if (!pending_) throw std::logic_error("DevicePrefetcher::take: no batch is pending");
  pending_ = false;
#ifdef TORCHFIT_WITH_CUDA
  if (cuda_) {
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream(device_.index());
    cuda_->copied.block(current);  // the compute stream waits; the trainer's synchronize() times the wait
    // Allocated on the side stream, used on the compute stream: the caching allocator must not hand
    // their memory out again before the compute stream is done with them.
    if (batch_.x.defined()) batch_.x.record_stream(current);
    if (batch_.y.defined()) batch_.y.record_stream(current);
    if (batch_.sample_weight.defined()) batch_.sample_weight.record_stream(current);
  }
#endif
  return std::move(batch_);
}

void DevicePrefetcher::clear() {
  pending_ = false;
  batch_ = DeviceBatch{};
}

}  // namespace torchfit::detail
