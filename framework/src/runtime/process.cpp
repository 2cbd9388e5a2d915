#include "torchfit/runtime/process.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <sched.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace torchfit::runtime {
namespace {

std::mutex g_mutex;
bool g_initialised = false;
MemoryRetention g_retention{false, "not initialised"};

// cgroup v2 quota: "max 100000" (no limit) or "<quota> <period>".
int cgroup_cpu_limit() {
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (!(f >> quota >> period) || quota == "max" || period <= 0) return 0;
  try {
    const double q = std::stod(quota);
    return std::max(1, static_cast<int>(std::ceil(q / static_cast<double>(period))));
  } catch (const std::exception&) {
    return 0;
  }
}

MemoryRetention tune_malloc() {
  const char* opt_out = std::getenv("TORCHFIT_MALLOC_DEFAULTS");
  if (opt_out != nullptr && std::string(opt_out) != "" && std::string(opt_out) != "0") {
    return {false, "disabled by TORCHFIT_MALLOC_DEFAULTS=" + std::string(opt_out) + " (glibc defaults)"};
  }
#if defined(__GLIBC__)
  constexpr int kMmapThreshold = 1 << 30;  // 1 GiB
  constexpr int kTrimThreshold = INT_MAX;  // 2 GiB - 1
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  std::string trim = trim_ok ? ", M_TRIM_THRESHOLD=2 GiB" : " (M_TRIM_THRESHOLD refused)";
  if (mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1) {
    return {true, "glibc mallopt M_MMAP_THRESHOLD=1 GiB" + trim};
  }
  if (mallopt(M_MMAP_MAX, 0) == 1) {
    return {true, "glibc mallopt M_MMAP_MAX=0 (M_MMAP_THRESHOLD=1 GiB refused)" + trim};
  }
  return {trim_ok, "glibc refused M_MMAP_THRESHOLD and M_MMAP_MAX" + trim};
#else
  return {false, "not glibc: malloc left at its defaults"};
#endif
}

}  // namespace

int cpu_cores() {
  int n = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
#endif
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  const int quota = cgroup_cpu_limit();
  if (quota > 0 && (n <= 0 || quota < n)) n = quota;
  return std::max(1, n);
}

int init_process(int threads) {
  if (threads < 0) {
    throw std::invalid_argument("init_process: threads must be >= 0 (0 = all cores), got " +
                                std::to_string(threads));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  const bool first = !g_initialised;
  if (first) {
    g_retention = tune_malloc();
    g_initialised = true;
  }
  if (threads > 0) {
    if (at::get_num_threads() != threads) at::set_num_threads(threads);
  } else if (first) {
    const int cores = cpu_cores();
    if (at::get_num_threads() != cores) at::set_num_threads(cores);
  }
  return at::get_num_threads();
}

MemoryRetention memory_retention() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_retention;
}

}  // namespace torchfit::runtime
