// Private to framework/src/distributed: the CPU kernels of GradientReducer's compressed gradients
// (GradientCompression::bf16 / fp16). Values travel as 16-bit patterns in byte tensors (every c10d backend
// moves bytes; Gloo in LibTorch 1.13 has no bfloat16).
#pragma once

#include <cstdint>

#include <torchfit/distributed/gradient_reducer.h>

namespace torchfit::distributed::compression {

/// `out[i]` = the 16-bit pattern of `in[i]` rounded to nearest even (bf16: c10::BFloat16's rounding,
/// NaN → quiet NaN; fp16: IEEE half, c10::Half's). `n` elements, multithreaded.
void compress(GradientCompression format, const float* in, uint16_t* out, int64_t n);
/// `out[i]` = the float value of the pattern `in[i]` (exact).
void decompress(GradientCompression format, const uint16_t* in, float* out, int64_t n);
/// One rank's slice of the sum: `out[i]` = round(Σ_r value(in[r·stride + i])) for r = 0..ranks−1, the sum
/// in float32 in rank order, rounded once to `format`.
void reduce(GradientCompression format, const uint16_t* in, int64_t stride, int ranks, uint16_t* out, int64_t n);

}  // namespace torchfit::distributed::compression
