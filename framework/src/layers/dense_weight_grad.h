// Private to framework/src: Dense's training path on the CPU with its own kernel gradient.
//
// The kernel gradient of a Dense layer is gyᵀ·x: (units, batch)·(batch, inputs), a product whose inner
// size is the batch (32) and whose result is as large as the kernel (170 MB for the article's
// 82944 → 512 Dense). OpenBLAS zero-fills that result, then reads and writes it again while packing
// both operands. dense_weight_grad writes each element once, from R × 2 vectors of accumulators per
// tile (the same outer-product block as Conv2D's kernel gradient, layers/simd.h).
#pragma once

#include <ATen/ATen.h>

namespace torchfit::detail {

/// Whether linear_train computes the kernel gradient itself: autograd recording, a 2-D CPU float32 x
/// and a contiguous kernel (units, inputs) that needs a gradient, no autocast, an AVX2 or AVX-512 CPU.
bool linear_train_applies(const at::Tensor& x, const at::Tensor& w);

/// at::linear(x, w, b) — x (N, inputs), w (units, inputs), b (units) or undefined — whose backward takes
/// the kernel gradient from dense_weight_grad (the input and bias gradients stay LibTorch's: gy·w and
/// Σ gy). Same output as at::linear; gradients equal to float32 rounding. Falls back to at::linear
/// where linear_train_applies is false; under create_graph the backward uses LibTorch's operators.
at::Tensor linear_train(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b);

/// gyᵀ·x: gy (N, units) and x (N, inputs), float32 → (units, inputs), contiguous. `level` as
/// conv2d_weight_grad's (0 = simd_level()); throws c10::Error for other dtypes or a level above it.
at::Tensor dense_weight_grad(const at::Tensor& gy, const at::Tensor& x, int level = 0);

}  // namespace torchfit::detail
