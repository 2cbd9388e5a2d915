#pragma once
/// @file pooling1d3d.h
/// MaxPooling1D, AveragePooling1D (sequences) and MaxPooling3D, AveragePooling3D (volumes), as the
/// keras.layers classes of the same names, on the pooling family's base (base_pooling.h).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_pooling.h>

namespace torchfit {

/// Options of MaxPooling1D and AveragePooling1D: pool_size 2, strides = pool_size, padding "valid" (Keras).
using MaxPooling1DOptions = Pooling1DOptions;
using AveragePooling1DOptions = Pooling1DOptions;
/// Options of MaxPooling3D and AveragePooling3D: pool_size (2, 2, 2), strides = pool_size, "valid" (Keras).
using MaxPooling3DOptions = Pooling3DOptions;
using AveragePooling3DOptions = Pooling3DOptions;

/// The maximum over windows of a sequence's steps, per channel: Keras (steps, C) → (steps', C), held
/// (N, steps, C). Shapes, padding, errors, ONNX: PoolingLayer.
class MaxPooling1DImpl : public PoolingImpl<1> {
  TORCHFIT_LAYER_CLASS(MaxPooling1D);

 public:
  explicit MaxPooling1DImpl(MaxPooling1DOptions options = {})
      : PoolingImpl<1>(keras_class_name, std::move(options), /*max=*/true) {}
};
TORCH_MODULE(MaxPooling1D);

/// The mean over windows of a sequence's steps, per channel ("same": padded steps not counted). Keras
/// (steps, C) → (steps', C), held (N, steps, C). Shapes, padding, errors, ONNX: PoolingLayer.
class AveragePooling1DImpl : public PoolingImpl<1> {
  TORCHFIT_LAYER_CLASS(AveragePooling1D);

 public:
  explicit AveragePooling1DImpl(AveragePooling1DOptions options = {})
      : PoolingImpl<1>(keras_class_name, std::move(options), /*max=*/false) {}
};
TORCH_MODULE(AveragePooling1D);

/// The maximum over (D, H, W) windows of a volume, per channel: Keras (D, H, W, C) → (D', H', W', C), held
/// (N, D, H, W, C). Shapes, padding, errors, ONNX: PoolingLayer.
class MaxPooling3DImpl : public PoolingImpl<3> {
  TORCHFIT_LAYER_CLASS(MaxPooling3D);

 public:
  explicit MaxPooling3DImpl(MaxPooling3DOptions options = {})
      : PoolingImpl<3>(keras_class_name, std::move(options), /*max=*/true) {}
};
TORCH_MODULE(MaxPooling3D);

/// The mean over (D, H, W) windows of a volume, per channel ("same": padded values not counted). Keras
/// (D, H, W, C) → (D', H', W', C), held (N, D, H, W, C). Shapes, padding, errors, ONNX: PoolingLayer.
class AveragePooling3DImpl : public PoolingImpl<3> {
  TORCHFIT_LAYER_CLASS(AveragePooling3D);

 public:
  explicit AveragePooling3DImpl(AveragePooling3DOptions options = {})
      : PoolingImpl<3>(keras_class_name, std::move(options), /*max=*/false) {}
};
TORCH_MODULE(AveragePooling3D);

}  // namespace torchfit
