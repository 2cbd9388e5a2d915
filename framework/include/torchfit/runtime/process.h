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
/// 2. Threads: `threads > 0` sets LibTorch's intra-op thread count to `threads`
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
  bool applied = false;          ///< true when malloc was tuned by init_process
  std::string method;            ///< e.g. "mallopt M_MMAP_THRESHOLD=1 GiB, M_TRIM_THRESHOLD=2 GiB"
                                 ///< or why nothing was done ("not initialised", "disabled by ...")
};

/// The memory-retention state set by the first `init_process` call ("not initialised" before it).
MemoryRetention memory_retention();

}  // namespace torchfit::runtime
