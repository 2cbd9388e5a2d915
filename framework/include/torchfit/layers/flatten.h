#pragma once
/// @file flatten.h
/// Flatten — collapses each sample to a vector, as keras.layers.Flatten.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

struct FlattenOptions {
  /// Input shape (Keras order) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  TORCH_ARG(std::string, name) = "";

 public:
  /// No arguments beyond name and input_shape (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args&) {}
};

/// Flatten: (N, C, H, W) → (N, C·H·W).
///
/// Element order is the tensor's NCHW order (channel-major), NOT Keras's channels-last order: the
/// parameter count and output size are the same, but Keras weights for a following Dense layer would
/// need permuting (torchfit never loads Keras weights). No parameters.
class FlattenImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Flatten);

 public:
  explicit FlattenImpl(FlattenOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  FlattenOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Flatten);

}  // namespace torchfit
