#include "torchfit/runtime/device.h"

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>

#include <torchfit/runtime/logging.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "runtime/gpu_properties.h"
#include "torchfit/error.h"

#ifdef TORCHFIT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime_api.h>
#endif

namespace torchfit::runtime {
namespace detail {

bool built_with_cuda() {
#ifdef TORCHFIT_WITH_CUDA
  return true;
#else
  return false;
#endif
}

namespace {
// True when LibTorch's CUDA part (torch_cuda / ATen_cuda) is loaded, whether or not a GPU is visible.
bool libtorch_has_cuda_library() {
  try {
    (void)at::detail::getCUDAHooks().versionCUDART();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}
}  // namespace

std::string cuda_unavailable_reason() {
  if (at::hasCUDA()) return "";
  if (!libtorch_has_cuda_library()) {
    if (built_with_cuda()) {
      return "LibTorch's CUDA library (torch_cuda) is not loaded although torchfit was built against a CUDA "
             "LibTorch; link the program with -Wl,--no-as-needed";
    }
    return "this LibTorch is CPU-only (built without CUDA; see docs/gpu.md for a CUDA build)";
  }
#ifdef TORCHFIT_WITH_CUDA
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    return std::string("no CUDA GPU is visible (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
  }
#endif
  return "no CUDA GPU is visible (check the driver, nvidia-smi and CUDA_VISIBLE_DEVICES)";
}

std::vector<GpuProperties> gpu_properties() {
  std::vector<GpuProperties> out;
#ifdef TORCHFIT_WITH_CUDA
  if (!at::hasCUDA()) return out;
  const int n = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < n; ++i) {
    // at::cuda::getDeviceProperties lives in torch_cuda: referencing it also keeps that library
    // linked into every program that uses device.cpp (see cuda_unavailable_reason).
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(i));
    GpuProperties g;
    g.index = i;
    g.name = p->name;
    g.major = p->major;
    g.minor = p->minor;
    g.total_memory_bytes = static_cast<std::uint64_t>(p->totalGlobalMem);
    g.multiprocessors = p->multiProcessorCount;
    out.push_back(std::move(g));
  }
#endif
  return out;
}

}  // namespace detail

namespace {

constexpr const char* kAccepted = "accepted: cpu, cuda, cuda:N (N = 0, 1, ...), auto";

int visible_cuda_devices() { return at::hasCUDA() ? static_cast<int>(torch::cuda::device_count()) : 0; }

c10::Device checked_cuda(int index, const std::string& spec) {
  const std::string reason = detail::cuda_unavailable_reason();
  if (!reason.empty()) {
    throw Error("device '" + spec + "' requested, but CUDA cannot be used: " + reason +
                " (use device 'cpu', or 'auto' to take CUDA only when it can be used)");
  }
  const int n = visible_cuda_devices();
  if (index >= n) {
    throw Error("device '" + spec + "' requested, but only " + std::to_string(n) +
                " CUDA device(s) are visible (cuda:0 .. cuda:" + std::to_string(n - 1) + ")");
  }
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace

c10::Device parse_device(const std::string& spec) {
  if (spec == "cpu") return c10::Device(c10::DeviceType::CPU);
  if (spec == "auto") {
    const std::string reason = detail::cuda_unavailable_reason();
    if (reason.empty()) {
      const auto gpus = detail::gpu_properties();
      torchfit::logger().info("device auto: CUDA is available ({} GPU(s){}) -> using cuda:0", visible_cuda_devices(),
                              gpus.empty() ? std::string() : ", cuda:0 = " + gpus.front().name);
      return c10::Device(c10::DeviceType::CUDA, 0);
    }
    torchfit::logger().info("device auto: CUDA not available ({}) -> using cpu", reason);
    return c10::Device(c10::DeviceType::CPU);
  }
  if (spec == "cuda") return checked_cuda(0, spec);
  const std::string prefix = "cuda:";
  if (spec.size() > prefix.size() && spec.compare(0, prefix.size(), prefix) == 0) {
    const std::string digits = spec.substr(prefix.size());
    const bool all_digits = digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string::npos;
    if (all_digits) return checked_cuda(std::stoi(digits), spec);
  }
  throw std::invalid_argument("invalid device '" + spec + "' (" + kAccepted + ")");
}

void synchronize(const c10::Device& device) {
  if (device.is_cpu()) return;
  if (device.is_cuda()) {
    const std::string reason = detail::cuda_unavailable_reason();
    if (!reason.empty()) throw Error("synchronize(" + device.str() + "): " + reason);
    torch::cuda::synchronize(device.has_index() ? device.index() : -1);
    return;
  }
  throw Error("synchronize: unsupported device '" + device.str() + "' (torchfit runs on cpu and cuda)");
}

void set_gpu_memory_fraction(double fraction, const c10::Device& device) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {  // also rejects NaN
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", fraction);
    throw std::invalid_argument(std::string("set_gpu_memory_fraction: the fraction must be in (0, 1], got ") + buf);
  }
  if (!device.is_cuda()) {
    throw Error("set_gpu_memory_fraction: the cap applies to a CUDA device, but the device is '" + device.str() +
                "' (cap a CUDA device, or leave the memory uncapped)");
  }
#ifdef TORCHFIT_WITH_CUDA
  const std::string reason = detail::cuda_unavailable_reason();
  if (!reason.empty()) throw Error("set_gpu_memory_fraction: " + reason);
  const int index = device.has_index() ? device.index() : 0;
  const int n = visible_cuda_devices();
  if (index >= n) {
    throw Error("set_gpu_memory_fraction: " + device.str() + " is not visible (" + std::to_string(n) +
                " CUDA device(s))");
  }
  // An empty tensor initialises CUDA and the caching allocator for this device without allocating.
  (void)at::empty({0},
                  at::TensorOptions().device(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index))));
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, static_cast<c10::DeviceIndex>(index));
  const auto gpus = detail::gpu_properties();
  const double gib = index < static_cast<int>(gpus.size())
                         ? static_cast<double>(gpus[index].total_memory_bytes) / (1024.0 * 1024.0 * 1024.0)
                         : 0.0;
  torchfit::logger().info(
      "GPU memory capped at {:.0f}% of cuda:{} ({:.1f} of {:.1f} GiB) through the CUDA caching allocator",
      fraction * 100.0, index, fraction * gib, gib);
#else
  throw Error("set_gpu_memory_fraction: needs torchfit built against a CUDA LibTorch; " +
              (detail::cuda_unavailable_reason().empty()
                   ? std::string("this build was compiled without TORCHFIT_WITH_CUDA (see docs/gpu.md)")
                   : detail::cuda_unavailable_reason()));
#endif
}

}  // namespace torchfit::runtime
