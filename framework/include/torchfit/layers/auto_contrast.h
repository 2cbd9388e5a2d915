#pragma once
/// @file auto_contrast.h
/// AutoContrast — stretches each image channel over the whole value range, in training and inference, as
/// keras.layers.AutoContrast (Keras 3).
#include <string>
#include <utility>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of AutoContrast (Keras 3's arguments and defaults; every argument optional).
struct AutoContrastOptions : LayerOptions<AutoContrastOptions> {
  /// [low, high] of the input's values (sorted, as Keras). Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};

 public:
  template <typename Args>
  void args(Args& a) {
    a("value_range", value_range());
  }
};

/// Deterministic and active in training and inference (Keras 3's transform_images ignores `training`): per
/// image and channel, v = x mapped from value_range to [0, 255], lo and hi its minimum and maximum over the
/// rows and columns, s = 255 / (hi − lo), clip(v·s − lo·s, 0, 255) mapped back; where that is NaN (a constant
/// channel: s = inf; a NaN input) the input value (AutoContrast.transform_images). Input (N, C, H, W) [Keras
/// (H, W, C)], output the same. ONNX: GlobalMaxPool (and of −x for the minimum), the arithmetic, Min and Max, IsNaN
/// and Where. Errors: ConfigError naming the layer for a value_range that is not two finite, different numbers
/// (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/auto_contrast.py.
class AutoContrastImpl : public Layer {
  TORCHFIT_LAYER_CLASS(AutoContrast);

 public:
  explicit AutoContrastImpl(AutoContrastOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  nlohmann::json config() const override { return base_config(options); }
  AutoContrastOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::pair<double, double> value_range_;
};
TORCH_MODULE(AutoContrast);

}  // namespace torchfit
