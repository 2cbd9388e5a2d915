// Private to framework/src: what torchfit's own vectorised CPU kernels share. Each kernel is written once
// with GCC vector types in always_inline templates and compiled per instruction set by target-attributed
// entry points ("avx2,fma" and "avx512f"), chosen at run time by simd_level().
#pragma once

namespace torchfit::detail {

/// The widest vector path torchfit's own CPU kernels may use here: 0 none, 1 AVX2+FMA, 2 AVX-512
/// (F, BW, VL, DQ). The CPU's flags, capped as ATen caps its own kernels by ATEN_CPU_CAPABILITY
/// ("default" → 0, "avx2" → 1), so forcing the AVX2 paths forces these too.
int simd_level();

/// L floats as one GCC vector (L = 8: AVX2's ymm, 16: AVX-512's zmm).
template <int L>
struct Lanes {
  typedef float type __attribute__((vector_size(L * sizeof(float))));
  typedef int index __attribute__((vector_size(L * sizeof(int))));
};

}  // namespace torchfit::detail
