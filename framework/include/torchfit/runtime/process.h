#pragma once
/// @file process.h
/// Process-level set-up every torchfit program does once at start-up: keep freed memory inside the
/// process (glibc malloc tuning) and use every available CPU core for LibTorch's intra-op threads.
#include <cstddef>
#include <string>

namespace torchfit::runtime {

/// Number of CPU cores this process may run on: the CPUs in its affinity mask
/// (sched_getaffinity, so `taskset` and cpusets count), further capped by a cgroup-v2 CPU quota
/// (/sys/fs/cgroup/cpu.max) when one is set. Logical CPUs, i.e. hyper-threads count as cores.
/// Never less than 1.
int cpu_cores();

/// Process set-up, called by every app at start-up and again by `Trainer::fit` (idempotent).
///
/// 1. Memory retention (first call only): glibc returns large freed blocks to the OS and every new
///    activation/gradient tensor is then page-faulted in again, which dominated a training step on
///    the 2-core reference machine. We call `mallopt(M_MMAP_THRESHOLD, 1 GiB)` (blocks under 1 GiB come
///    from the heap, not from fresh mmap) and `mallopt(M_TRIM_THRESHOLD, 2 GiB - 1)` (the heap is not
///    shrunk until 2 GiB are free at its top). Should a glibc refuse the threshold (older ones cap it
///    at 32 MiB), `mallopt(M_MMAP_MAX, 0)` is used instead. Effect measured in docs/benchmarks.md
///    (an out-of-place ReLU on 32×32×148×148 floats: ~27 ms → ~8.5 ms). Blocks allocated by threads
///    other than the main one may still be mmapped by glibc (its per-thread heaps are 64 MiB).
///    Opt out with the environment variable `TORCHFIT_MALLOC_DEFAULTS=1` (for before/after
///    measurements). Not compiled in on non-glibc systems.
/// 2. BLAS kernels (first call only): OpenBLAS built with DYNAMIC_ARCH picks its sgemm kernels from
///    the CPU model number, and a release older than the CPU falls back to its generic SSE3
///    "Prescott" kernels: Debian 12's OpenBLAS 0.3.21 does this on Sapphire/Emerald Rapids Xeons,
///    where a 2048² sgemm then runs at ~35 GFLOP/s instead of ~200 (2 cores). When the kernels
///    OpenBLAS chose use less of the CPU than its features allow (AVX-512, AVX2+FMA, AVX; see
///    `blas_coretype_for`), init_process sets `OPENBLAS_CORETYPE` and re-runs OpenBLAS's own kernel
///    selection (`gotoblas_dynamic_quit` + `gotoblas_dynamic_init`, looked up with dlsym, so nothing is
///    done with any other BLAS). Call it before other threads run BLAS work. A user's own
///    `OPENBLAS_CORETYPE` is respected; `TORCHFIT_BLAS_DEFAULTS=1` opts out. See `blas_kernels()`.
///    (Opt-out variables: any value but "", 0, false, no, off — case-insensitive — opts out.)
/// 3. Threads: `threads > 0` sets LibTorch's intra-op thread count to `threads`
///    (`at::set_num_threads`). `threads == 0` means "default": `cpu_cores()` on the first call
///    (LibTorch's own default on Debian is ONE thread), and keep the current setting on later calls,
///    so `fit` calling `init_process()` does not undo an app's `--threads`.
///
/// @param threads intra-op threads; 0 (default) = all cores on the first call, unchanged afterwards.
/// @return the intra-op thread count now in effect (`at::get_num_threads()`).
/// @throws std::invalid_argument when `threads` is negative (message names the value).
int init_process(int threads = 0);

/// What `init_process` did about memory, for logs and environment reports.
struct MemoryRetention {
  bool applied = false;  ///< true when malloc was tuned by init_process
  std::string method;    ///< e.g. "mallopt M_MMAP_THRESHOLD=1 GiB, M_TRIM_THRESHOLD=2 GiB"
                         ///< or why nothing was done ("not initialised", "disabled by ...")
};

/// The memory-retention state set by the first `init_process` call ("not initialised" before it).
MemoryRetention memory_retention();

/// CPU vector features that decide which OpenBLAS kernels fit a CPU.
struct CpuVectorFeatures {
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512dq = false;
  bool avx512vl = false;
};

/// This CPU's features (`__builtin_cpu_supports`; all false on non-x86 builds).
CpuVectorFeatures cpu_vector_features();

/// The OpenBLAS core type (a name `OPENBLAS_CORETYPE` accepts) whose kernels use the widest vector
/// unit in `f`: "SkylakeX" (AVX-512 F/BW/DQ/VL; newer cores add only bf16 kernels), "Haswell" (AVX2 +
/// FMA), "Sandybridge" (AVX), or "" when only SSE is available (nothing better than OpenBLAS's fallback).
std::string blas_coretype_for(const CpuVectorFeatures& f);

/// How wide the vector kernels of an OpenBLAS core type are, from its name as
/// `openblas_get_corename()` spells it (case-insensitive): 4 for the AVX-512 cores (SkylakeX,
/// Cooperlake, SapphireRapids), 3 for AVX2 (Haswell, Zen),
/// 2 for AVX (Sandybridge, Bulldozer/Piledriver/Steamroller/Excavator), 1 for the SSE-only cores
/// (Prescott, Core2, Penryn, Dunnington, Nehalem, Atom, Barcelona, ...), 0 when the name is unknown.
int blas_core_rank(const std::string& corename);

/// What `init_process` did about the BLAS kernels.
struct BlasKernels {
  bool openblas = false;  ///< OpenBLAS with run-time kernel selection was found in the process
  std::string detected;   ///< the core OpenBLAS chose by itself (e.g. "Prescott"), "" if not OpenBLAS
  std::string active;     ///< the core in use after init_process (e.g. "SkylakeX")
  std::string method;     ///< one line for logs: what was done and why
};

/// The BLAS-kernel state set by the first `init_process` call (method "not initialised" before it).
BlasKernels blas_kernels();

}  // namespace torchfit::runtime
