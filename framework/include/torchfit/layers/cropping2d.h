#pragma once
/// @file cropping2d.h
/// Cropping2D — removes rows and columns at the edges of an image, as keras.layers.Cropping2D.
#include <optional>
#include <string>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/edges2d.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Cropping2D. Keras default cropping 0 on every edge.
struct Cropping2DOptions : LayerOptions<Cropping2DOptions> {
  Cropping2DOptions(Edges2D cropping = 0) : cropping_(cropping) {}  // NOLINT: Cropping2DOptions(2)
  /// Pixels removed at (top, bottom, left, right) (each ≥ 0); an int or (rows, cols) as Keras. Default 0.
  TORCH_ARG(Edges2D, cropping);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("cropping", cropping());
  }
};

/// Crops: input (N, C, H, W) [Keras (H, W, C)], output (N, C, H − top − bottom, W − left − right), a
/// view of the input. No parameters. Errors: ConfigError for a negative cropping (construction), a
/// non-3-D input or a cropping that leaves no row or column (build).
class Cropping2DImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Cropping2D);

 public:
  /// ONNX: Slice (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Cropping2DImpl(Cropping2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  Cropping2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Cropping2D);

}  // namespace torchfit
