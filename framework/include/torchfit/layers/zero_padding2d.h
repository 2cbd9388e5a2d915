#pragma once
/// @file zero_padding2d.h
/// ZeroPadding2D — rows and columns of zeros around an image, as keras.layers.ZeroPadding2D.
#include <optional>
#include <string>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/edges2d.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of ZeroPadding2D. Keras default padding 1 on every edge.
struct ZeroPadding2DOptions : LayerOptions<ZeroPadding2DOptions> {
  ZeroPadding2DOptions(Edges2D padding = 1) : padding_(padding) {}  // NOLINT: ZeroPadding2DOptions(2)
  /// Zeros added at (top, bottom, left, right) (each ≥ 0); an int or (rows, cols) as Keras. Default 1.
  TORCH_ARG(Edges2D, padding);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("padding", padding());
  }
};

/// Pads with zeros: input (N, C, H, W) [Keras (H, W, C)], output (N, C, H + top + bottom,
/// W + left + right). No parameters. Errors: ConfigError for a negative padding (construction) or a
/// non-3-D input (build).
class ZeroPadding2DImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ZeroPadding2D);

 public:
  /// ONNX: Pad (constant 0) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit ZeroPadding2DImpl(ZeroPadding2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  ZeroPadding2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(ZeroPadding2D);

}  // namespace torchfit
