#pragma once
/// @file global_pooling2d.h
/// GlobalAveragePooling2D and GlobalMaxPooling2D — as the keras.layers classes of the same names.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options shared by the global pooling layers.
struct GlobalPooling2DOptions : LayerOptions<GlobalPooling2DOptions> {
 public:
  /// No arguments beyond name and input_shape (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args&) {}
};

/// Mean over all pixels of each channel: (N, C, H, W) [Keras (H, W, C)] → (N, C) [Keras (C)].
/// No parameters (Keras keepdims=False). Errors: ConfigError for a non-3-D input.
class GlobalAveragePooling2DImpl : public Layer {
  TORCHFIT_LAYER_CLASS(GlobalAveragePooling2D);

 public:
  /// ONNX: GlobalAveragePool → Flatten (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit GlobalAveragePooling2DImpl(GlobalPooling2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  GlobalPooling2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(GlobalAveragePooling2D);

/// Maximum over all pixels of each channel: (N, C, H, W) [Keras (H, W, C)] → (N, C) [Keras (C)].
/// No parameters (Keras keepdims=False). Errors: ConfigError for a non-3-D input.
class GlobalMaxPooling2DImpl : public Layer {
  TORCHFIT_LAYER_CLASS(GlobalMaxPooling2D);

 public:
  /// ONNX: GlobalMaxPool → Flatten (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit GlobalMaxPooling2DImpl(GlobalPooling2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  GlobalPooling2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(GlobalMaxPooling2D);

}  // namespace torchfit
