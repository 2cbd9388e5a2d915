#pragma once
/// @file env_info.h
/// What a run executes on: versions, build kind, GPUs, CPU, threads, BLAS. device_info prints it;
/// train_cnn prints the same header before training and stores the JSON with its run.
#include <c10/core/Device.h>
#include <nlohmann/json.hpp>

#include <string>

namespace torchfit::runtime {

/// Collects the environment as JSON. Keys (values are null when not applicable):
/// - `torchfit_version` (TORCHFIT_VERSION), `libtorch_version` (TORCH_VERSION from <torch/version.h>),
///   `build` ("CPU-only LibTorch" or "CUDA <ver>, cuDNN <ver>"), `torchfit_cuda_code` (bool,
///   TORCHFIT_WITH_CUDA)
/// - `cuda`: {`available` bool, `unavailable_reason` string|null, `runtime_version` "12.1"|null,
///   `cudnn_version` "8.9.2"|null, `device_count` int}
/// - `gpus`: [{`index`, `name`, `compute_capability` "9.0", `memory_bytes`, `memory_gib`,
///   `multiprocessors`}] (empty without CUDA)
/// - `device`: the device string, e.g. "cpu" or "cuda:0"
/// - `cpu`: {`model` (from /proc/cpuinfo "model name"), `logical_cpus` (hardware_concurrency),
///   `cores_available` (cpu_cores())}
/// - `threads`: {`requested` (the `threads` argument), `intra_op` (at::get_num_threads()),
///   `inter_op` (at::get_num_interop_threads())}
/// - `parallel_backend` (the "ATen parallel backend" line), `parallel_info` (at::get_parallel_info()
///   text), `blas_info` (BLAS_INFO from at::show_config(), e.g. "generic", "mkl"),
///   `blas_libraries` (BLAS/LAPACK shared objects actually mapped into the process, from
///   /proc/self/maps — shows whether OpenBLAS or the reference BLAS is in use), `build_config`
///   (at::show_config() text)
/// - `opencv_version` (CV_VERSION), `memory_retention` (init_process's malloc tuning), `blas_kernels`
///   (init_process's OpenBLAS kernel choice: openblas, detected, active, method),
///   `host` (hostname)
/// @param device the device the run uses (shown as-is; not validated).
/// @param threads the thread count the run asked for (0 = default); the effective count is read
///        from LibTorch.
/// Never throws for missing facts: unknown values are null or "unknown".
nlohmann::json environment_info(const c10::Device& device, int threads);

/// Human-readable multi-line header of `environment_info` (no trailing newline), e.g.
/// ```
/// torchfit 0.1.0 on host
///   LibTorch   1.13.0 (CPU-only LibTorch)
///   CUDA       not available: this LibTorch is CPU-only (...)
///   CPU        Intel(R) Xeon(R) Processor, 2 cores available
///   Threads    2 intra-op, 1 inter-op (requested: default)
///   Parallel   OpenMP; BLAS_INFO=generic; BLAS in use: .../openblas-openmp/libblas.so.3
///   OpenCV     4.6.0
///   Memory     glibc mallopt M_MMAP_THRESHOLD=1 GiB, M_TRIM_THRESHOLD=2 GiB
///   Device     cpu
/// ```
/// with one `GPU N` line per GPU (name, compute capability, memory) when there are any.
/// Missing keys print as "unknown".
std::string format_header(const nlohmann::json& info);

}  // namespace torchfit::runtime
