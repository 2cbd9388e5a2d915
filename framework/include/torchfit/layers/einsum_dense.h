#pragma once
/// @file einsum_dense.h
/// EinsumDense — a dense layer given by an einsum equation, as keras.layers.EinsumDense.
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// EinsumDense's `output_shape`: the output's sizes without the batch (and without the axes "..." stands
/// for), an entry null (std::nullopt) when it is taken from the input's axis of the same letter. Read from
/// an integer or a list (Keras accepts both), written as a list (Keras's config: partial_output_shape).
struct EinsumOutputShape {
  EinsumOutputShape() = default;
  EinsumOutputShape(int64_t size) : dims{size} {}  // NOLINT(google-explicit-constructor): Keras's int form
  EinsumOutputShape(std::vector<std::optional<int64_t>> sizes) : dims(std::move(sizes)) {}  // NOLINT
  std::vector<std::optional<int64_t>> dims;
  bool operator==(const EinsumOutputShape& o) const { return dims == o.dims; }
};
void to_json(nlohmann::json& j, const EinsumOutputShape& s);
/// Errors: std::invalid_argument for a value that is neither an integer nor a list of integers and nulls.
void from_json(const nlohmann::json& j, EinsumOutputShape& s);

/// Options of EinsumDense. Required: equation, output_shape. Defaults as Keras 3.
struct EinsumDenseOptions : LayerOptions<EinsumDenseOptions> {
  EinsumDenseOptions(std::string equation, EinsumOutputShape output_shape)
      : equation_(std::move(equation)), output_shape_(std::move(output_shape)) {}
  /// For the registry only (layer_args.h): leaves the required arguments unset, to be read from a config.
  explicit EinsumDenseOptions(FromConfig) {}
  /// "[X],[Y]->[Z]", "...[X],[Y]->...[Z]" or "[X]...,[Y]->[Z]..." (Keras's three forms): X the input's axes
  /// with the batch (or "..." for the leading ones, the batch among them), Y the kernel's, Z the output's.
  TORCH_ARG(std::string, equation);
  /// The output's sizes without the batch (see EinsumOutputShape).
  TORCH_ARG(EinsumOutputShape, output_shape);
  /// A name from activation_names() (layers/activation_fn.h; default linear).
  TORCH_ARG(std::string, activation) = "linear";
  /// Letters of the output that get a bias (default none: no bias), e.g. "d" or "de".
  TORCH_ARG(std::optional<std::string>, bias_axes) = std::nullopt;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("equation", equation());
    a.required("output_shape", output_shape());
    a("activation", activation());
    a("bias_axes", bias_axes());
  }
};

/// y = activation(einsum(equation, x, kernel) + bias), as keras.layers.EinsumDense (Keras 3,
/// keras/src/layers/core/einsum_dense.py). The kernel's and the bias's shapes come from the equation as
/// Keras's _analyze_einsum_string derives them: a kernel letter takes the input's size of that letter, else
/// the output's; the bias covers the output's axes from the first of bias_axes to the last (size 1 on the
/// letters not in bias_axes, and on the axes a trailing "..." stands for) and broadcasts against the output.
///
/// Shapes are Keras's (the equation is over Keras's order with the batch): "...b,bc->...c" with
/// output_shape 64 maps (…, b) → (…, 64); "abc,cd->abd" a sequence (L, c) → (L, d); "abcd,cde->abe" an
/// image (H, W, C) → (H, e). Tensors: an image (rank-3 sample) is held (N, C, H, W) and moved to Keras's
/// (N, H, W, C) for the einsum; a rank-3 output is returned as an image (N, C', H', W'); every other rank
/// is held in Keras's order. Parameters: the kernel's and the bias's sizes. Kernel glorot_uniform (fans as
/// Keras's compute_fans of the kernel shape), bias zeros. Keras weights kernel and bias in Keras's shapes,
/// held the same.
/// Errors: ConfigError naming the layer for an equation in none of the three forms, an output letter in
/// neither operand, a kernel letter in neither the input nor the output (or one on the batch axis), an
/// output_shape that has the wrong length, disagrees with the input on a shared letter or leaves a kernel
/// size unknown, a bias letter not in the output, an input of another rank than the equation's, or an
/// unknown activation.
class EinsumDenseImpl : public Layer {
  TORCHFIT_LAYER_CLASS(EinsumDense);

 public:
  explicit EinsumDenseImpl(EinsumDenseOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override;
  /// ONNX: Einsum (opset ≥ 12) with the same equation, + bias, the activation; an image moved to Keras's
  /// order and back by Transposes.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

  EinsumDenseOptions options;
  /// The kernel and bias in Keras's shapes (bias undefined without bias_axes); undefined before build.
  at::Tensor kernel, bias;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  /// Keras weights: kernel, then bias (with bias_axes), in Keras's shapes.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(EinsumDense);

}  // namespace torchfit
