// Private to framework/src: LibTorch's autocast switches, whose names changed in 2.4
// (is_cpu_enabled/set_autocast_cpu_dtype/... became is_autocast_enabled(device_type)/...), and whether
// ATen has CPU kernels for the AMP loss-scaling operators (2.x does, 1.13 has CUDA kernels only).
// Verified against 1.13.1 (Debian 12) and 2.6.0 (Debian 13); docs/gpu.md.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace torchfit::compat {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TORCHFIT_AUTOCAST_BY_DEVICE_TYPE 1
#endif

/// LibTorch 1.x sends bf16 convolutions and products to oneDNN whenever the CPU has AVX-512 BW/VL/DQ
/// (ATen's mkldnn_bf16_device_check reads the CPU, not oneDNN's ISA cap); 2.x asks oneDNN itself.
#if TORCH_VERSION_MAJOR < 2
inline constexpr bool kAtenBf16IgnoresOnednnIsaCap = true;
#else
inline constexpr bool kAtenBf16IgnoresOnednnIsaCap = false;
#endif

/// Whether autocast is on for `type` (CPU or CUDA), and its dtype.
inline bool autocast_enabled(c10::DeviceType type) {
#ifdef TORCHFIT_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType autocast_dtype(c10::DeviceType type) {
#ifdef TORCHFIT_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                       : at::autocast::get_autocast_cpu_dtype();
#endif
}

inline void set_autocast(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
#ifdef TORCHFIT_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  }
#endif
}

/// True when ATen has CPU kernels for _amp_foreach_non_finite_check_and_unscale_ and _amp_update_scale_
/// (read from the presence of their CPU dispatch headers, not from a version number).
#if __has_include(<ATen/ops/_amp_update_scale_cpu_dispatch.h>) && \
    __has_include(<ATen/ops/_amp_foreach_non_finite_check_and_unscale_cpu_dispatch.h>)
constexpr bool kAmpKernelsOnCpu = true;
#else
constexpr bool kAmpKernelsOnCpu = false;
#endif

}  // namespace torchfit::compat
