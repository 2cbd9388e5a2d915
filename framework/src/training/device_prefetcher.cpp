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
  batch_ = DeviceBatch::of(batch);
  pending_ = true;
#ifdef TORCHFIT_WITH_CUDA
  if (!cuda_) return;
  c10::cuda::CUDAStreamGuard on_side(cuda_->side);
  batch_.each([&](const at::Tensor& t) { return t.to(device_, /*non_blocking=*/true); });
  cuda_->copied.record(cuda_->side);
#else
  if (!device_.is_cpu()) {  // a non-CPU device in a build without CUDA code: plain copies
    batch_.each([&](const at::Tensor& t) { return t.to(device_); });
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
    batch_.each([&](const at::Tensor& t) {
      t.record_stream(current);
      return t;
    });
  }
#endif
  return std::move(batch_);
}

void DevicePrefetcher::clear() {
  pending_ = false;
  batch_ = DeviceBatch{};
}

}  // namespace torchfit::detail
