#pragma once
/// @file affine_transform.h
/// Keras 3's ops.image.affine_transform on a batch of images, in plain ATen ops (CPU and CUDA): the one
/// resampler of the geometric augmentation layers (RandomRotation, RandomZoom, RandomTranslation, RandomShear).
#include <string>

#include <ATen/ATen.h>

namespace torchfit {

/// Resamples each image of `images` (N, C, H, W) [Keras (N, H, W, C)] through its transform: `transforms`
/// (N, 8) or (8) for every image, Keras's/TensorFlow's [a0, a1, a2, b0, b1, b2, c0, c1], which maps each
/// OUTPUT pixel (column x, row y; integer pixel coordinates, 0 at the first pixel's centre) to the input
/// point column (a0·x + a1·y + a2) / k, row (b0·x + b1·y + b2) / k, k = c0·x + c1·y + 1 (TensorFlow's
/// ImageProjectiveTransformV3; k = 1 for the affine transforms the layers build). Output (N, C, H, W).
/// `interpolation`: "bilinear" (the input's four neighbours of the point, weighted) or "nearest" (the pixel
/// floor(p + 0.5) on each axis, as scipy's order-0 map_coordinates in Keras's NumPy backend).
/// `fill_mode` gives the pixels outside the input (per integer index, as Keras's map_coordinates pads):
/// "reflect" (d c b a | a b c d | d c b a), "wrap" (a b c d | a b c d | a b c d), "nearest"
/// (a a a a | a b c d | d d d d), "constant" (`fill_value` everywhere outside, so bilinear blends with it at
/// the border). A point with k = 0 is fill_value (TensorFlow's rule). Computed in float64 for float64 images,
/// else in float32, then cast back to the images' dtype; differentiable with respect to the images.
/// Source: keras/src/backend/numpy/image.py affine_transform and map_coordinates (Keras 3).
/// Errors: std::invalid_argument naming the value for another interpolation or fill_mode, images that are
/// not 4-D or transforms of another shape.
at::Tensor affine_transform(const at::Tensor& images, const at::Tensor& transforms, const std::string& interpolation,
                            const std::string& fill_mode, double fill_value);

/// Whether `fill_mode` is one affine_transform takes ("reflect", "wrap", "constant", "nearest").
bool is_affine_fill_mode(const std::string& fill_mode);
/// Whether `interpolation` is one affine_transform takes ("nearest", "bilinear").
bool is_affine_interpolation(const std::string& interpolation);

}  // namespace torchfit
