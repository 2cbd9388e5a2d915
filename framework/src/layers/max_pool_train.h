// Private to framework/src: MaxPooling2D's training path on the CPU for windows that do not overlap.
//
// ATen's max pooling records an int64 index per output element in the forward pass, and its backward
// zero-fills the whole input-sized gradient before scattering into it: three passes over a tensor as
// large as the layer's input (90 MB for the article's first pooling at batch 32). For windows that do
// not overlap (strides = pool_size, "valid", the usual 2×2), max_pool2d_train keeps no indices and its
// backward writes each input gradient element once, finding the window's maximum again from the saved
// input with ATen's rule (the first maximum in row-major window order; a NaN wins over numbers, the last
// NaN over earlier ones), so outputs and gradients are ATen's exactly.
#pragma once

#include <ATen/ATen.h>

namespace torchfit::detail {

/// Whether max_pool2d_train pools x itself: autograd recording, x a CPU float32 channels_last
/// (N, C, H, W) tensor that needs a gradient, C a multiple of 8, strides equal to the window, an AVX2
/// CPU (simd_level() >= 1; 8-lane kernels on AVX-512 too).
bool max_pool2d_train_applies(const at::Tensor& x, at::IntArrayRef window, at::IntArrayRef strides);

/// at::max_pool2d(x, window, strides) (no padding, floor mode) — x (N, C, H, W), result (N, C, H / ph,
/// W / pw) — through torchfit's kernels where max_pool2d_train_applies, else at::max_pool2d itself.
/// `relu`: followed by relu_ in the same pass (and its gradient in the backward's), as a model runs
/// Conv2D(relu) → MaxPooling2D with the ReLU after the pooling.
at::Tensor max_pool2d_train(const at::Tensor& x, at::IntArrayRef window, at::IntArrayRef strides, bool relu = false);

/// The gradient of max_pool2d_train's output gy (N, C, Ho, Wo, channels_last) with respect to its
/// input x (channels_last): gy at each window's maximum, 0 elsewhere and in rows/columns no window
/// covers; with `relu`, not where the maximum is <= 0. Throws c10::Error without an AVX2 CPU, for float64
/// or channels not a multiple of 8.
at::Tensor max_pool2d_input_grad(const at::Tensor& gy, const at::Tensor& x, at::IntArrayRef window, bool relu = false);

}  // namespace torchfit::detail
