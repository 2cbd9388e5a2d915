#pragma once
/// @file shape.h
/// Keras-order shapes: a Shape lists the per-sample dimensions WITHOUT the batch axis, in Keras order
/// ((H, W, C) for images, (D) for vectors). Tensors are LibTorch's (N, C, H, W); see to_tensor_shape().
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit {

/// Per-sample shape in Keras order, batch axis excluded: (H, W, C) or (D).
using Shape = std::vector<int64_t>;

/// "(None, 148, 148, 32)" — the Keras summary spelling, batch shown as None.
std::string format_shape(const Shape& shape);

/// "(None, 4, 4, 3), (None, 4, 4, 8)" — several shapes, as format_shape, comma-separated.
std::string format_shapes(const std::vector<Shape>& shapes);

/// "(32, 3, 150, 150)" — a tensor's sizes (batch included, tensor order), for messages.
std::string format_sizes(const std::vector<int64_t>& sizes);

/// Keras (H, W, C) → tensor (C, H, W); other ranks unchanged.
Shape to_tensor_shape(const Shape& keras_shape);

/// Tensor (C, H, W) → Keras (H, W, C); other ranks unchanged.
Shape to_keras_shape(const Shape& tensor_shape);

/// Product of the dimensions.
int64_t shape_numel(const Shape& shape);

/// The tensor dim of the first spatial axis of an input with `spatial_rank` spatial axes, the others
/// following it: 2 for an image (N, C, H, W), 1 for a sequence (N, steps, C) or a volume (N, D, H, W, C)
/// (held in Keras's order, the channels last).
inline int64_t spatial_tensor_dim(size_t spatial_rank) { return spatial_rank == 2 ? 2 : 1; }

}  // namespace torchfit

namespace torchfit {

/// The tensor axis ((N, C, H, W) or (N, D)) of Keras axis `axis` of a batch of per-sample `keras_shape`
/// (Keras counts over (N, H, W, C) / (N, D), negatives from the end: −1 is C for an image). −1 when the
/// axis is the batch axis or outside the rank.
int64_t keras_to_tensor_axis(const Shape& keras_shape, int64_t axis);

}  // namespace torchfit
