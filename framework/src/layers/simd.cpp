#include "layers/simd.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <torchfit/runtime/process.h>

namespace torchfit::detail {

int simd_level() {
  static const int level = [] {
    const runtime::CpuVectorFeatures f = runtime::cpu_vector_features();
    const int cpu = f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl ? 2 : f.avx2 && f.fma ? 1 : 0;
    const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
    const std::string c = cap == nullptr ? "" : cap;
    if (c == "default") return 0;
    if (c == "avx2") return std::min(cpu, 1);
    return cpu;
  }();
  return level;
}

}  // namespace torchfit::detail
