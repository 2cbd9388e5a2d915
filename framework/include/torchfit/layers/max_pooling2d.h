#pragma once
/// @file max_pooling2d.h
/// MaxPooling2D — 2-D max pooling as keras.layers.MaxPooling2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_pooling.h>

namespace torchfit {

/// Options of MaxPooling2D (base_pooling.h).
using MaxPooling2DOptions = Pooling2DOptions;

/// The maximum over each (H, W) window, per channel; "same" pads with −inf, so padded pixels never win.
/// Shapes, defaults and errors: Pooling2DImpl.
class MaxPooling2DImpl : public Pooling2DImpl {
  TORCHFIT_LAYER_CLASS(MaxPooling2D);

 public:
  explicit MaxPooling2DImpl(MaxPooling2DOptions options = {}) : Pooling2DImpl(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;
};
TORCH_MODULE(MaxPooling2D);

}  // namespace torchfit
