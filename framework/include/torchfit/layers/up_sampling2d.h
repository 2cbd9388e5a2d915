#pragma once
/// @file up_sampling2d.h
/// UpSampling2D — repeats or interpolates rows and columns, as keras.layers.UpSampling2D.
#include <optional>
#include <string>

#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_up_sampling.h>

namespace torchfit {

/// Options of UpSampling2D. Keras defaults: size 2, interpolation "nearest".
struct UpSampling2DOptions : LayerOptions<UpSampling2DOptions> {
  UpSampling2DOptions(torch::ExpandingArray<2> size = 2) : size_(size) {}  // NOLINT: UpSampling2DOptions(3)
  /// Upsampling factors (rows, cols) (> 0); an int means both. Default 2.
  TORCH_ARG(torch::ExpandingArray<2>, size);
  /// "nearest" (each pixel repeated, default) or "bilinear".
  TORCH_ARG(std::string, interpolation) = "nearest";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("size", size());
    a("interpolation", interpolation());
  }
};

/// Input (N, C, H, W) [Keras (H, W, C)], output (N, C, H·s_h, W·s_w). "nearest" repeats each pixel
/// s_h × s_w times (UpSamplingLayer); "bilinear" is tf.image.resize's bilinear with half-pixel centres (what
/// Keras 2.x's backend.resize_images and Keras 3 call): source coordinate (i + 0.5) / s − 0.5, clamped to
/// the image (so the edge rows repeat the edge pixel). No parameters. Errors: ConfigError for a factor ≤ 0
/// or another interpolation (construction), a non-3-D input (build).
class UpSampling2DImpl : public UpSamplingLayer {
  TORCHFIT_LAYER_CLASS(UpSampling2D);

 public:
  /// ONNX: Resize (nearest: asymmetric, floor; bilinear: half_pixel) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit UpSampling2DImpl(UpSampling2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  UpSampling2DOptions options;
};
TORCH_MODULE(UpSampling2D);

}  // namespace torchfit
