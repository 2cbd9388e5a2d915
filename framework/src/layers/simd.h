// Private to framework/src: what torchfit's own vectorised CPU kernels share. Each kernel is written once
// with GCC vector types in always_inline templates and compiled per instruction set by target-attributed
// entry points ("avx2,fma" and "avx512f,avx512bw,avx512dq,avx512vl"), chosen at run time by simd_level().
#pragma once

#include <cstdint>
#include <cstring>

namespace torchfit::detail {

/// The widest vector path torchfit's own CPU kernels may use here: 0 none, 1 AVX2+FMA, 2 AVX-512
/// (F, BW, VL, DQ). The CPU's flags (runtime::cpu_vector_features), capped as ATen caps its own kernels by
/// ATEN_CPU_CAPABILITY
/// ("default" → 0, "avx2" → 1), so forcing the AVX2 paths forces these too.
int simd_level();

/// Why a kernel refuses to run where simd_level() is 0.
inline constexpr const char* kNoVectorPath =
    "no AVX2+FMA or AVX-512 path here (simd_level() 0: the CPU lacks AVX2/FMA, or ATEN_CPU_CAPABILITY=default)";

/// L floats as one GCC vector (L = 8: AVX2's ymm, 16: AVX-512's zmm).
template <int L>
struct Lanes {
  typedef float type __attribute__((vector_size(L * sizeof(float))));
  typedef int index __attribute__((vector_size(L * sizeof(int))));
};

// Multiply-adds contract to FMA instructions in these templates (the project compiles as ISO C++, where
// GCC does not contract by default); they are inlined into the target-attributed entry points.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

/// out[r·co + c] (+)= Σ_i xp[i·xs + r] · gp[i·gs + c] for r < R, c < CB·L: a sum of `count` outer
/// products of R scalars with CB vectors, the R × CB accumulators in registers (Conv2D's kernel gradient:
/// r = the taps of a kernel row, c = filters, i = output pixels; Dense's: r = units, c = inputs, i = the
/// batch). Store: write out instead of adding to it.
template <int L, int R, int CB, bool Store>
[[gnu::always_inline]] inline void rank_update(const float* xp, int64_t xs, const float* gp, int64_t gs, int64_t count,
                                               float* out, int64_t co) {
  using V = typename Lanes<L>::type;
  V acc[R][CB];
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 32
    for (int c = 0; c < CB; ++c) acc[r][c] = V{};
  for (int64_t i = 0; i < count; ++i, xp += xs, gp += gs) {
    V g[CB];
#pragma GCC unroll 32
    for (int c = 0; c < CB; ++c) std::memcpy(&g[c], gp + c * L, sizeof(V));
#pragma GCC unroll 32
    for (int r = 0; r < R; ++r) {
      const V b = V{} + xp[r];
#pragma GCC unroll 32
      for (int c = 0; c < CB; ++c) acc[r][c] += b * g[c];
    }
  }
#pragma GCC unroll 32
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 32
    for (int c = 0; c < CB; ++c) {
      V o = acc[r][c];
      if constexpr (!Store) {
        V old;
        std::memcpy(&old, out + r * co + c * L, sizeof(V));
        o += old;
      }
      std::memcpy(out + r * co + c * L, &o, sizeof(V));
    }
  }
}

/// rank_update for a run-time number of rows r in [1, RMAX].
template <int L, int RMAX, int CB, bool Store>
[[gnu::always_inline]] inline void rank_update_r(int r, const float* xp, int64_t xs, const float* gp, int64_t gs,
                                                 int64_t count, float* out, int64_t co) {
  if constexpr (RMAX > 1) {
    if (r < RMAX) return rank_update_r<L, RMAX - 1, CB, Store>(r, xp, xs, gp, gs, count, out, co);
  }
  rank_update<L, RMAX, CB, Store>(xp, xs, gp, gs, count, out, co);
}

#pragma GCC pop_options

}  // namespace torchfit::detail
