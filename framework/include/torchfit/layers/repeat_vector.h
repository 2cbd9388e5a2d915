#pragma once
/// @file repeat_vector.h
/// RepeatVector and Identity — as keras.layers.RepeatVector and keras.layers.Identity.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of RepeatVector. Required: n.
struct RepeatVectorOptions : LayerOptions<RepeatVectorOptions> {
  explicit RepeatVectorOptions(int64_t n) : n_(n) {}
  /// For the registry only (layer_args.h): leaves n unset, to be read from a config.
  explicit RepeatVectorOptions(FromConfig) : n_(0) {}
  /// Repetitions (>= 1).
  TORCH_ARG(int64_t, n);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("n", n());
  }
};

/// Repeats a vector n times: Keras (D) → (n, D); tensors (N, D) → (N, n, D) (a sequence, held in Keras's
/// order). No parameters. Errors: ConfigError for n < 1 (construction) or an input that is not a vector (build).
class RepeatVectorImpl : public Layer {
  TORCHFIT_LAYER_CLASS(RepeatVector);

 public:
  /// ONNX: Unsqueeze, then Concat of n copies on axis 1 (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit RepeatVectorImpl(RepeatVectorOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  RepeatVectorOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(RepeatVector);

/// Options of Identity (no arguments but name and input_shape).
struct IdentityOptions : LayerOptions<IdentityOptions> {
  template <typename Args>
  void args(Args&) {}
};

/// Passes its input through unchanged (keras.layers.Identity). Any input shape; output the same.
class IdentityImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Identity);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: none, its input passes through (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit IdentityImpl(IdentityOptions options = {});
  at::Tensor forward(const at::Tensor& x) override { return x; }
  nlohmann::json config() const override { return base_config(options); }
  IdentityOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(Identity);

}  // namespace torchfit
