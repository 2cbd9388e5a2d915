#pragma once
/// @file dense.h
/// Dense — fully connected layer as keras.layers.Dense.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Dense. Required: units. Defaults as Keras.
struct DenseOptions : LayerOptions<DenseOptions> {
  explicit DenseOptions(int64_t units) : units_(units) {}
  /// For the registry only (layer_args.h): leaves units unset, to be read from a config.
  explicit DenseOptions(FromConfig) : units_(0) {}
  /// Output features (> 0).
  TORCH_ARG(int64_t, units);
  /// A name from activation_names() (layers/activation_fn.h: relu, gelu, silu, softmax, …; default linear).
  TORCH_ARG(std::string, activation) = "linear";
  /// Add a bias (default true; zero-initialised).
  TORCH_ARG(bool, use_bias) = true;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("units", units());
    a("activation", activation());
    a("use_bias", use_bias());
  }
};

/// Fully connected layer over the last Keras axis, any rank: y = activation(x·Wᵀ + b), as keras.layers.Dense
/// (Keras 3 applies the kernel to the last axis of an input of any rank).
///
/// Input Keras (..., D) → output (..., units): a vector (N, D) → (N, units); a sequence or any other
/// non-image rank, held in Keras's order (N, ..., D) → (N, ..., units); an image (H, W, C), held as
/// (N, C, H, W), over its channels → (N, units, H, W) (Keras (H, W, units); a 1×1 convolution).
/// Parameters D·units + units. Kernel glorot_uniform, bias zeros (Keras defaults).
/// Errors: ConfigError for units ≤ 0, an unknown activation, or an input without axes.
class DenseImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Dense);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: Gemm (transB = 1) for a vector input, Conv 1×1 for an image, MatMul + Add for other ranks
  /// (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit DenseImpl(DenseOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override;
  int64_t flops_per_sample() const override;

  DenseOptions options;
  /// Weight (units, D) and bias (units); undefined before build.
  at::Tensor kernel, bias;

 protected:
  /// Keras weights: kernel (D, units), bias (units).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(Dense);

}  // namespace torchfit
