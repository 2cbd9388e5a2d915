#pragma once
/// @file average_pooling2d.h
/// AveragePooling2D — 2-D average pooling as keras.layers.AveragePooling2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_pooling.h>

namespace torchfit {

/// Options of AveragePooling2D (base_pooling.h).
using AveragePooling2DOptions = Pooling2DOptions;

/// The mean over each (H, W) window, per channel. With "same" the padded pixels are NOT counted in the
/// mean (as tf.nn.avg_pool / Keras). Shapes, defaults, errors and its ONNX AveragePool (count_include_pad 0):
/// PoolingLayer (base_pooling.h).
class AveragePooling2DImpl : public Pooling2DImpl {
  TORCHFIT_LAYER_CLASS(AveragePooling2D);

 public:
  explicit AveragePooling2DImpl(AveragePooling2DOptions options = {})
      : Pooling2DImpl(keras_class_name, std::move(options), /*max=*/false) {}
};
TORCH_MODULE(AveragePooling2D);

}  // namespace torchfit
