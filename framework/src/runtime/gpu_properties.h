#pragma once
// Private to framework/src/runtime: CUDA facts that need CUDA headers (TORCHFIT_WITH_CUDA builds).
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::runtime::detail {

struct GpuProperties {
  int index = 0;
  std::string name;
  int major = 0;  // compute capability
  int minor = 0;
  std::uint64_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

/// Properties of every visible CUDA device; empty on a CPU-only build or when no GPU is visible.
std::vector<GpuProperties> gpu_properties();

/// True when torchfit was compiled against a CUDA LibTorch (TORCHFIT_WITH_CUDA).
bool built_with_cuda();

/// Why CUDA cannot be used ("this LibTorch is CPU-only", "no CUDA GPU is visible", …), or "" when it can.
std::string cuda_unavailable_reason();

}  // namespace torchfit::runtime::detail
