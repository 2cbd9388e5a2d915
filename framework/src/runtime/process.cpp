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

#include <dlfcn.h>
#include <sched.h>
#include <strings.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace torchfit::runtime {
namespace {

std::mutex g_mutex;
bool g_initialised = false;
MemoryRetention g_retention{false, "not initialised"};
BlasKernels g_blas{false, "", "", "not initialised"};

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

// An opt-out environment variable is set to anything but "", 0, false, no or off (any case).
bool opted_out(const char* var) {
  const char* v = std::getenv(var);
  if (v == nullptr) return false;
  for (const char* off : {"", "0", "false", "no", "off"})
    if (strcasecmp(v, off) == 0) return false;
  return true;
}

MemoryRetention tune_malloc() {
  if (opted_out("TORCHFIT_MALLOC_DEFAULTS")) {
    return {false, "disabled by TORCHFIT_MALLOC_DEFAULTS=" + std::string(std::getenv("TORCHFIT_MALLOC_DEFAULTS")) +
                       " (glibc defaults)"};
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

// OpenBLAS's run-time kernel selection (DYNAMIC_ARCH builds export these; other BLAS do not).
BlasKernels select_blas_kernels() {
  using corename_fn = char* (*)();
  using init_fn = void (*)();
  auto corename = reinterpret_cast<corename_fn>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  auto dyn_init = reinterpret_cast<init_fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init"));
  auto dyn_quit = reinterpret_cast<init_fn>(dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit"));
  if (corename == nullptr) return {false, "", "", "no OpenBLAS in the process: BLAS left as it is"};
  const std::string detected = corename();
  if (dyn_init == nullptr || dyn_quit == nullptr)
    return {true, detected, detected, "OpenBLAS core " + detected + " (no run-time kernel selection in this build)"};
  if (opted_out("TORCHFIT_BLAS_DEFAULTS"))
    return {true, detected, detected,
            "OpenBLAS core " + detected +
                " (left as OpenBLAS chose: TORCHFIT_BLAS_DEFAULTS=" + std::getenv("TORCHFIT_BLAS_DEFAULTS") + ")"};
  if (const char* user = std::getenv("OPENBLAS_CORETYPE"); user != nullptr && *user != '\0')
    return {true, detected, detected,
            "OpenBLAS core " + detected + " (OPENBLAS_CORETYPE=" + user + " set by the user)"};
  const std::string want = blas_coretype_for(cpu_vector_features());
  if (want.empty() || blas_core_rank(detected) == 0 || blas_core_rank(detected) >= blas_core_rank(want))
    return {true, detected, detected, "OpenBLAS core " + detected + " (matches the CPU)"};
  // OpenBLAS reads OPENBLAS_CORETYPE in gotoblas_dynamic_init; quit clears its choice first.
  setenv("OPENBLAS_CORETYPE", want.c_str(), 1);
  dyn_quit();
  dyn_init();
  unsetenv("OPENBLAS_CORETYPE");
  const std::string active = corename();
  if (strcasecmp(active.c_str(), want.c_str()) != 0) {
    dyn_quit();  // not accepted: back to OpenBLAS's own choice
    dyn_init();
    return {true, detected, corename(),
            "OpenBLAS core " + detected + " kept (" + want + " not accepted by this OpenBLAS)"};
  }
  return {true, detected, active,
          "OpenBLAS core " + active + " (OpenBLAS chose " + detected + " for this unknown CPU model; the CPU has " +
              (blas_core_rank(want) == 4   ? "AVX-512"
               : blas_core_rank(want) == 3 ? "AVX2+FMA"
                                           : "AVX") +
              ")"};
}

}  // namespace

CpuVectorFeatures cpu_vector_features() {
  CpuVectorFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx = __builtin_cpu_supports("avx");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
#endif
  return f;
}

std::string blas_coretype_for(const CpuVectorFeatures& f) {
  // Cooperlake and SapphireRapids add bf16 kernels only; their float kernels are SkylakeX's, and
  // OpenBLAS 0.3.21's OPENBLAS_CORETYPE does not accept "Cooperlake".
  if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl) return "SkylakeX";
  if (f.avx2 && f.fma) return "Haswell";
  if (f.avx) return "Sandybridge";
  return "";
}

int blas_core_rank(const std::string& corename) {
  static const std::pair<const char*, int> kRanks[] = {
      {"skylakex", 4},    {"cooperlake", 4}, {"sapphirerapids", 4}, {"haswell", 3},     {"zen", 3},
      {"sandybridge", 2}, {"bulldozer", 2},  {"piledriver", 2},     {"steamroller", 2}, {"excavator", 2},
      {"prescott", 1},    {"core2", 1},      {"penryn", 1},         {"dunnington", 1},  {"nehalem", 1},
      {"atom", 1},        {"barcelona", 1},  {"bobcat", 1},         {"opteron", 1},     {"opteron_sse3", 1},
      {"katmai", 1},      {"coppermine", 1}, {"northwood", 1},      {"banias", 1},      {"athlon", 1}};
  for (const auto& [name, rank] : kRanks)
    if (strcasecmp(corename.c_str(), name) == 0) return rank;
  return 0;
}

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
    throw std::invalid_argument("init_process: threads must be >= 0 (0 = all cores), got " + std::to_string(threads));
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  const bool first = !g_initialised;
  if (first) {
    g_retention = tune_malloc();
    g_blas = select_blas_kernels();
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

BlasKernels blas_kernels() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_blas;
}

}  // namespace torchfit::runtime
