#pragma once
// TensorFlow's tf.image.resize along one axis as an (out × in) weight matrix, for the Resizing layer's
// methods other than plain bilinear and nearest: ResizeBicubic (half-pixel centres, Keys a = −0.5 through
// TensorFlow's 1024-entry table), ResizeArea (box coverage) and ScaleAndTranslate (sampling_kernels.h:
// triangle, keyscubic, lanczos3, lanczos5, gaussian, mitchellcubic; antialias scales the kernel by
// max(in / out, 1)). Sample positions are computed in float32 as TensorFlow computes them (so every tap
// and table entry is TensorFlow's), the weights in float64. The matrix is applied as y = W · x along the
// axis; a resize is separable, so (N, C, H, W) → Wy · x · Wxᵀ.
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace torchfit::detail {

/// Every interpolation Resizing accepts, in the order its messages list them.
const std::vector<std::string>& resize_interpolations();

/// True when (method, antialias) is computed through resize_axis_weights: every method but "nearest" and
/// antialias-free "bilinear" (those keep LibTorch's own kernels).
bool resize_uses_weights(const std::string& method, bool antialias);

/// The (out, in) float64 CPU matrix of tf.image.resize(method, antialias) from `in` samples to `out`
/// (both ≥ 1): "bicubic" (antialias: ScaleAndTranslate "keyscubic"), "area" (antialias ignored, as
/// TensorFlow), "bilinear" with antialias ("triangle"), "lanczos3", "lanczos5", "gaussian",
/// "mitchellcubic". Taps outside the image are left out and the rest renormalised to sum 1 (a sum below
/// 1000·FLT_MIN leaves the row 0, as TensorFlow). Errors: std::invalid_argument for another method.
at::Tensor resize_axis_weights(int64_t in, int64_t out, const std::string& method, bool antialias);

}  // namespace torchfit::detail
