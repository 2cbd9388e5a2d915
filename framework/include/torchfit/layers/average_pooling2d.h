#pragma once
/// @file average_pooling2d.h
/// AveragePooling2D — 2-D average pooling as keras.layers.AveragePooling2D.
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_pooling.h>

namespace torchfit {

/// Options of AveragePooling2D (base_pooling.h).
using AveragePooling2DOptions = Pooling2DOptions;

/// The mean over each (H, W) window, per channel. With "same" the padded pixels are NOT counted in the
/// mean (as tf.nn.avg_pool / Keras). Shapes, defaults and errors: Pooling2DImpl.
class AveragePooling2DImpl : public Pooling2DImpl {
  TORCHFIT_LAYER_CLASS(AveragePooling2D);

 public:
  /// ONNX: AveragePool, count_include_pad 0 (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit AveragePooling2DImpl(AveragePooling2DOptions options = {})
      : Pooling2DImpl(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  at::Tensor inv_count_;  // (1, 1, H', W') 1 / number of real pixels per window ("same" only)
};
TORCH_MODULE(AveragePooling2D);

}  // namespace torchfit
