#pragma once
// Swish — a user-defined activation layer living outside torchfit: y = x · sigmoid(beta · x), with a
// trainable scalar beta (Ramachandran et al. 2017; Keras's swish is the beta = 1 case, without training).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

/// Options of Swish. Defaults: beta 1.0, trainable.
struct SwishOptions {
  /// Initial beta. Default 1.0.
  TORCH_ARG(double, beta) = 1.0;
  /// Learn beta (1 trainable parameter) or keep it fixed (0 parameters). Default true.
  TORCH_ARG(bool, trainable) = true;
  /// Input shape (Keras order) when this is the first layer.
  TORCH_ARG(std::optional<torchfit::Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: swish, swish_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras-style arguments, each listed once (torchfit/layers/layer_args.h): config() writes them
  /// and the registry reads them back. name and input_shape are handled for every layer.
  template <typename Args>
  void args(Args& a) {
    a("beta", beta());
    a("trainable", trainable());
  }
};

/// y = x · sigmoid(beta · x), element-wise. Any input shape ((N, C, H, W) or (N, D)); output the same.
/// Parameters: beta, shape (1): trainable when options.trainable(), else a non-trainable parameter
/// (still saved by checkpoints). Errors: none beyond the base Layer's.
class SwishImpl : public torchfit::Layer {
  TORCHFIT_LAYER_CLASS(Swish);

 public:
  explicit SwishImpl(SwishOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  /// ONNX export (torchfit/saving/onnx.h): Mul(x, beta) → Sigmoid → Mul(x, ·).
  std::string export_onnx(torchfit::saving::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

  SwishOptions options;
  at::Tensor beta;

 protected:
  torchfit::Shape build_impl(const torchfit::Shape& input_shape) override;
  /// Keras weights (Layer::set_keras_weights): [beta], shape (1), as a Keras Swish with add_weight would hold it.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const torchfit::KerasWeightOptions&) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(Swish);
