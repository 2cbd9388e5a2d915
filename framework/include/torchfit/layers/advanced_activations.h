#pragma once
/// @file advanced_activations.h
/// The activation layers with arguments, as Keras's advanced_activations: LeakyReLU, ELU (alpha), ReLU
/// (max_value, negative_slope, threshold), Softmax (axis), PReLU (a learned alpha, shared_axes) and
/// ThresholdedReLU (theta).
/// (GELU is the activation name "gelu": Activation("gelu") or `.activation("gelu")` on Dense/Conv2D.)
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <optional>
#include <vector>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of LeakyReLU. Keras default alpha 0.3 (LibTorch's default slope is 0.01).
struct LeakyReLUOptions : LayerOptions<LeakyReLUOptions> {
  /// Slope for x < 0 (≥ 0). Default 0.3.
  TORCH_ARG(double, alpha) = 0.3;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("alpha", alpha());
  }
};

/// f(x) = x for x ≥ 0, alpha·x otherwise. Any input shape; output the same. No parameters.
/// Errors: ConfigError for alpha < 0.
class LeakyReLUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(LeakyReLU);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: LeakyRelu (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit LeakyReLUImpl(LeakyReLUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  LeakyReLUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(LeakyReLU);

/// Options of ELU. Keras default alpha 1.0.
struct ELUOptions : LayerOptions<ELUOptions> {
  /// Scale of the negative part (≥ 0). Default 1.0.
  TORCH_ARG(double, alpha) = 1.0;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("alpha", alpha());
  }
};

/// f(x) = x for x > 0, alpha·(exp(x) − 1) otherwise. Any input shape; output the same. No parameters.
/// Errors: ConfigError for alpha < 0.
class ELUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ELU);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Elu (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit ELUImpl(ELUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  ELUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(ELU);

/// Options of ReLU, with Keras's defaults (a plain ReLU).
struct ReLUOptions : LayerOptions<ReLUOptions> {
  /// Upper bound of the output (≥ 0), or unset (Keras's None, default): no bound. 6 gives ReLU6.
  TORCH_ARG(std::optional<double>, max_value) = std::nullopt;
  /// Slope below the threshold (≥ 0). Default 0.
  TORCH_ARG(double, negative_slope) = 0.0;
  /// Inputs above it pass (≥ 0). Default 0.
  TORCH_ARG(double, threshold) = 0.0;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("max_value", max_value());
    a("negative_slope", negative_slope());
    a("threshold", threshold());
  }
};

/// Keras's backend.relu, exactly (tf.keras 2.x and Keras 3 compute the same):
///   f(x) = min(x, max_value)                 for x > threshold,
///   f(x) = negative_slope · (x − threshold)  otherwise
/// (at x = threshold > 0 the output is 0, as Keras's `x · (x > threshold)`; with threshold 0 it is the
/// usual max(x, 0) plus the slope). Any input shape; output the same. No parameters.
/// Errors: ConfigError for a negative max_value, negative_slope or threshold (as Keras).
class ReLUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ReLU);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Relu / LeakyRelu, or Keras's backend.relu in elementary operators (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit ReLUImpl(ReLUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  ReLUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(ReLU);

/// Options of Softmax. Keras default axis −1 (the channels of an image, the features of a vector).
struct SoftmaxOptions : LayerOptions<SoftmaxOptions> {
  /// Keras axis over (N, H, W, C) / (N, D): an int or a list (tf.keras 2.x), negatives from the end,
  /// resolved against the input when the layer is built. Default −1.
  TORCH_ARG(KerasAxes, axis) = KerasAxes(-1);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
  }
};

/// exp(x) / Σ exp(x) along the Keras axis (Keras axis −1 of an (H, W, C) input is tensor axis 1); over
/// several axes (a list), exp(x − logsumexp(x over them)), as tf.keras. Any input shape; output the same.
/// No parameters. Errors: ConfigError for the batch axis, an axis outside the input or given twice (build).
class SoftmaxImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Softmax);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Softmax over the tensor axis of the Keras axis (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit SoftmaxImpl(SoftmaxOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  /// The tensor dimensions ((N, C, H, W) / (N, D) order) the softmax runs over; valid after build.
  const std::vector<int64_t>& tensor_axes() const { return tensor_axes_; }
  SoftmaxOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> tensor_axes_{1};
};
TORCH_MODULE(Softmax);

/// Options of PReLU, with Keras's defaults (one alpha per input element, initialised to zeros).
struct PReLUOptions : LayerOptions<PReLUOptions> {
  /// Keras's per-sample axes (1-based, batch excluded: (H, W, C) = 1, 2, 3) along which alpha is shared,
  /// i.e. has size 1: {1, 2} on an image gives one alpha per channel. Unset (Keras's None, default): none.
  TORCH_ARG(std::optional<Shape>, shared_axes) = std::nullopt;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("shared_axes", shared_axes());
  }
};

/// Parametric ReLU, as keras.layers.PReLU: f(x) = max(x, 0) + alpha · min(x, 0), alpha learned. Any input
/// shape; output the same. Parameter `alpha` (zeros, Keras's alpha_initializer default), of the per-sample
/// input shape with the shared axes set to 1 — Keras (H, W, C) order in the Keras weights, held in
/// torchfit's (C, H, W) order for images so that it broadcasts against (N, C, H, W); (D) for vectors.
/// Errors: ConfigError naming the layer for a shared axis outside 1..rank of the input (build).
class PReLUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(PReLU);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: PRelu with alpha shaped to broadcast against the input (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit PReLUImpl(PReLUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  PReLUOptions options;
  /// The slopes, in torchfit's order ((C, H, W) for an image); undefined before build.
  at::Tensor alpha;

 protected:
  /// Keras weights: alpha, in Keras's order ((H, W, C) for an image, shared axes of size 1).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(PReLU);

/// Options of ThresholdedReLU. Keras default theta 1.0.
struct ThresholdedReLUOptions : LayerOptions<ThresholdedReLUOptions> {
  /// Inputs above it pass (≥ 0). Default 1.0.
  TORCH_ARG(double, theta) = 1.0;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("theta", theta());
  }
};

/// tf.keras 2's ThresholdedReLU (Keras 3 has none; its ReLU(threshold=θ) differs below θ only by the
/// slope, which is 0 here): f(x) = x for x > theta, 0 otherwise (as Keras's `x · (x > theta)`). Any input
/// shape; output the same. No parameters. Errors: ConfigError for theta < 0 (as Keras 2.15).
class ThresholdedReLUImpl : public Layer {
  TORCHFIT_LAYER_CLASS(ThresholdedReLU);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: ThresholdedRelu (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit ThresholdedReLUImpl(ThresholdedReLUOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  ThresholdedReLUOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(ThresholdedReLU);

}  // namespace torchfit
