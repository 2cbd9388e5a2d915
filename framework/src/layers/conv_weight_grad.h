// Private to framework/src: Conv2D's training path on the CPU with its own weight gradient.
//
// oneDNN (LibTorch's CPU convolution) computes the forward pass and the input gradient well, but its
// weight gradient of a channels_last float32 convolution runs at 10–50 % of the machine's sgemm rate
// for the shapes image models have (3 input channels, 32–64 filters), most of all with its AVX2 kernels
// (docs/benchmarks.md, "AVX2 paths and the FLOP floor"). conv2d_train keeps oneDNN for the forward pass
// and the input gradient and computes the kernel and bias gradients with a direct NHWC kernel
// (vectorised over the filters, AVX2+FMA or AVX-512, one partial sum per thread).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "layers/simd.h"

namespace torchfit::detail {

/// Whether conv2d_train computes the gradients itself for these arguments: a CPU float32
/// channels_last input, groups 1, dilation 1, filters a multiple of 8, a weight that needs a gradient,
/// autograd recording, no autocast, and an AVX2 or AVX-512 CPU. Otherwise it is at::conv2d.
bool conv2d_train_applies(const at::Tensor& x, const at::Tensor& w, at::IntArrayRef dilation, int64_t groups);

/// at::conv2d(x, w, b, stride, padding) — x (N, C, H, W) channels_last, w (filters, C, kh, kw), b
/// (filters) or undefined, padding {top/bottom, left/right} — whose backward computes the weight and
/// bias gradients with torchfit's kernel (the input gradient stays oneDNN's). Same outputs as
/// at::conv2d; the gradients agree with it to float32 rounding (other summation order). Falls back to
/// at::conv2d where conv2d_train_applies is false.
at::Tensor conv2d_train(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::IntArrayRef stride,
                        at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups);

/// The kernel's and bias's gradients of a stride-`stride`, padding-`padding` convolution: gy (N,
/// filters, Ho, Wo) and x (N, C, H, W) both channels_last float32, w's shape and strides for the
/// result. Returns {grad_kernel (like w), grad_bias (filters) or undefined unless `bias`}. `level`: the
/// vector path (1 AVX2, 2 AVX-512; 0 = simd_level()); AVX-512 needs filters a multiple of 16 and falls
/// back to AVX2 otherwise. Throws c10::Error for a level above simd_level() or filters not a multiple of 8.
std::vector<at::Tensor> conv2d_weight_grad(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                           at::IntArrayRef stride, at::IntArrayRef padding, bool bias, int level = 0);

}  // namespace torchfit::detail
