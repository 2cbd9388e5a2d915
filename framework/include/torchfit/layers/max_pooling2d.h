#pragma once
/// @file max_pooling2d.h
/// MaxPooling2D — 2-D max pooling as keras.layers.MaxPooling2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_pooling.h>

namespace torchfit {

/// Options of MaxPooling2D (base_pooling.h).
using MaxPooling2DOptions = Pooling2DOptions;

/// The maximum over each (H, W) window, per channel; "same" pads with −inf, so padded pixels never win.
/// Shapes, defaults, errors and its ONNX MaxPool: PoolingLayer (base_pooling.h).
class MaxPooling2DImpl : public Pooling2DImpl {
  TORCHFIT_LAYER_CLASS(MaxPooling2D);

 public:
  explicit MaxPooling2DImpl(MaxPooling2DOptions options = {})
      : Pooling2DImpl(keras_class_name, std::move(options), /*max=*/true) {}
  at::Tensor forward(const at::Tensor& x) override;
  /// relu(forward(x)) — x (N, C, H, W) — as a model runs Conv2D(relu) → MaxPooling2D (the ReLU after the
  /// pooling, where it touches 4× fewer values for 2×2). On the CPU in training, for windows that do not
  /// overlap, one pass with its gradient in the pooling's backward; otherwise forward(x).relu_().
  at::Tensor forward_then_relu(const at::Tensor& x);
};
TORCH_MODULE(MaxPooling2D);

}  // namespace torchfit
