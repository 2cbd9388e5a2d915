#pragma once
/// @file device.h
/// Device selection (`--device`), CUDA synchronisation and the GPU memory cap
/// (`--gpu-memory-fraction`). Compiles and links against a CPU-only LibTorch as well as a CUDA one:
/// CUDA-only calls sit behind TORCHFIT_WITH_CUDA, which CMake defines only for a CUDA LibTorch.
#include <c10/core/Device.h>

#include <string>

namespace torchfit::runtime {

/// Parses a device spec as given to `--device` (`c10::Device` is the type `torch::Device` names).
///
/// Accepted (exactly, lower case):
/// - `cpu`
/// - `cuda` (= `cuda:0`) and `cuda:N` (N = 0, 1, … a visible CUDA device)
/// - `auto`: CUDA (`cuda:0`) when LibTorch can use a GPU, else `cpu` — the articles' "GPU has
///   priority" rule. Logs the choice and the reason through spdlog::info.
///
/// @throws std::invalid_argument for anything else (the message quotes the value and lists the
///         accepted forms), e.g. "gpu", "cuda:", "cuda:x", "CPU".
/// @throws torchfit::Error for `cuda`/`cuda:N` when CUDA cannot be used: "this LibTorch is CPU-only"
///         when LibTorch was built without CUDA, "no CUDA GPU is visible" when it was built with CUDA
///         but finds no device, or "only K CUDA device(s)" when N ≥ K.
c10::Device parse_device(const std::string& spec);

/// Waits until all work queued on `device` has finished, so a clock read after it measures the
/// work (GPU kernels launch asynchronously). No-op on the CPU. For CUDA: `torch::cuda::synchronize`
/// on the device's index (the current device when it has none).
/// @throws torchfit::Error for a CUDA device when CUDA is not available, and for device types other
///         than CPU and CUDA.
void synchronize(const c10::Device& device);

/// Caps the memory LibTorch's CUDA caching allocator may hold on `device` at `fraction` of the
/// device's total memory (PyTorch's `torch.cuda.set_per_process_memory_fraction`; TensorFlow's
/// `per_process_gpu_memory_fraction` in the articles). Allocations beyond the cap fail with
/// LibTorch's out-of-memory error. Without a cap, memory grows on demand — LibTorch's default,
/// the articles' "memory growth". Call once, before training allocates on the device.
///
/// @param fraction share of total device memory, 0 < fraction ≤ 1.
/// @param device a CUDA device (`cuda` = `cuda:0`).
/// @throws std::invalid_argument when fraction is not in (0, 1] (message names --gpu-memory-fraction).
/// @throws torchfit::Error when `device` is not a CUDA device, when this build has no CUDA
///         ("this LibTorch is CPU-only"), or when the device index is not visible.
void set_gpu_memory_fraction(double fraction, const c10::Device& device);

}  // namespace torchfit::runtime
