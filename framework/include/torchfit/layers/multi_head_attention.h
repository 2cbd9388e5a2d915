#pragma once
/// @file multi_head_attention.h
/// MultiHeadAttention — scaled dot-product attention over several heads, as keras.layers.MultiHeadAttention.
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/einsum_dense.h>
#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/keras_call.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of MultiHeadAttention. Required: num_heads, key_dim. Defaults as Keras 3
/// (keras/src/layers/attention/multi_head_attention.py).
struct MultiHeadAttentionOptions : LayerOptions<MultiHeadAttentionOptions> {
  MultiHeadAttentionOptions(int64_t num_heads, int64_t key_dim) : num_heads_(num_heads), key_dim_(key_dim) {}
  /// For the registry only (layer_args.h): leaves the required arguments unset, to be read from a config.
  explicit MultiHeadAttentionOptions(FromConfig) {}
  /// Number of heads (> 0).
  TORCH_ARG(int64_t, num_heads) = 0;
  /// Size of each head of the query and the key (> 0); the query is scaled by 1/sqrt(key_dim).
  TORCH_ARG(int64_t, key_dim) = 0;
  /// Size of each head of the value (> 0); default null: key_dim.
  TORCH_ARG(std::optional<int64_t>, value_dim) = std::nullopt;
  /// Dropout rate on the attention probabilities, training only (default 0, in [0, 1)).
  TORCH_ARG(double, dropout) = 0.0;
  /// Whether the four projections have biases (default true).
  TORCH_ARG(bool, use_bias) = true;
  /// The output's feature size: an int or a list of one (default null: the query's features).
  TORCH_ARG(std::optional<KerasAxes>, output_shape) = std::nullopt;
  /// Keras's attention axes: null (default, every axis but the batch, the heads and the features), or the
  /// same for a sequence: 1, -2, [1] or [-2] (what Keras writes after build). Others are refused.
  TORCH_ARG(std::optional<KerasAxes>, attention_axes) = std::nullopt;
  /// Keras's call argument use_causal_mask (held here; Keras's JSON has it in the call's kwargs): query step
  /// i attends to key steps j <= i only. Default false.
  TORCH_ARG(bool, use_causal_mask) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("num_heads", num_heads());
    a.required("key_dim", key_dim());
    a("value_dim", value_dim());
    a("dropout", dropout());
    a("use_bias", use_bias());
    a("output_shape", output_shape());
    a("attention_axes", attention_axes());
    a("use_causal_mask", use_causal_mask());
  }
};

/// Multi-head attention (Vaswani et al. 2017) as Keras 3's MultiHeadAttention: called on {query, value} or
/// {query, value, key} (key defaults to value), sequences held in Keras's order:
///   query (N, T, d_q), value (N, S, d_v), key (N, S, d_k) → (N, T, E), E = output_shape or d_q.
/// q = query·W_q + b_q (N, T, h, key_dim), k = key·W_k + b_k (N, S, h, key_dim), v = value·W_v + b_v
/// (N, S, h, value_dim); scores = softmax over S of (q / sqrt(key_dim))·kᵀ per head (N, h, T, S), masked
/// positions set to Keras's −1e9 before the softmax and to 0 after it (Keras's Softmax with a mask);
/// dropout on the scores (training); out = (scores·v) (N, T, h, value_dim) · W_o + b_o.
/// Weights: four EinsumDense sublayers with Keras's equations and names: query "abc,cde->abde" kernel
/// (d_q, h, key_dim), bias (h, key_dim); key (d_k, h, key_dim); value (d_v, h, value_dim);
/// attention_output "abcd,cde->abe" kernel (h, value_dim, E), bias (E). Kernels glorot_uniform (Keras's
/// fans of the 3-D kernel), biases zeros; kernel_/bias_initializer and _regularizer apply to all four, as
/// Keras passes them to each sublayer. Keras weights in Keras's order: query kernel, bias, key, value,
/// attention_output (tf.keras 2 names "<layer>/query/kernel:0"; Keras 3 keeps them in the sublayers
/// query_dense, key_dense, value_dense, output_dense).
/// Masks: use_causal_mask; the inputs' Keras masks from the graph (forward_masked); an explicit
/// attention_mask through forward_attention (C++) — the graph has no attention_mask input, and Keras files
/// that give one are refused. return_attention_scores: forward_attention gives the scores; a graph node has one
/// output, so a Keras file asking for them is refused.
/// Errors: ConfigError naming the layer for num_heads, key_dim or value_dim <= 0, dropout outside [0, 1),
/// an output_shape of more than one size, attention_axes other than the default (construction); not 2 or
/// 3 inputs, inputs that are not sequences (steps, features), value and key of different lengths (build).
class MultiHeadAttentionImpl : public Layer, public KerasCallArguments {
  TORCHFIT_LAYER_CLASS(MultiHeadAttention);

 public:
  explicit MultiHeadAttentionImpl(MultiHeadAttentionOptions options);
  bool takes_list() const override { return true; }
  /// Refused: MultiHeadAttention takes {query, value} or {query, value, key} (ConfigError).
  at::Tensor forward(const at::Tensor& x) override;
  /// {query, value} or {query, value, key}, each (N, steps, features).
  at::Tensor forward_multi(const std::vector<at::Tensor>& xs) override;
  /// With the inputs' Keras masks (query (N, T), value and key (N, S)): a query step attends to the value
  /// steps both masks keep (Keras's _compute_attention_mask), with use_causal_mask's too; a masked query step
  /// attends to nothing (its probabilities are zeros). The output carries the query's mask, as Keras.
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  bool supports_masking() const override { return true; }
  bool uses_mask() const override { return true; }
  /// The attention with Keras's optional call arguments: `key` undefined = value; `attention_mask`
  /// (N, T, S) or (T, S), true / nonzero = may attend (combined with use_causal_mask); `scores`, when
  /// given, receives the attention probabilities (N, h, T, S) (Keras's return_attention_scores).
  at::Tensor forward_attention(const at::Tensor& query, const at::Tensor& value, const at::Tensor& key = {},
                               const at::Tensor& attention_mask = {}, at::Tensor* scores = nullptr);
  nlohmann::json config() const override { return base_config(options); }
  std::vector<std::string> keras_call_keywords() const override { return {"query", "value", "key"}; }
  std::vector<std::string> keras_call_flags() const override { return {"use_causal_mask"}; }
  /// "query/kernel", "query/bias", "key/…", "value/…", "attention_output/…" (no biases without use_bias).
  std::vector<std::string> keras_weight_names() const override;
  /// ONNX: MatMul + Add per projection, Reshape / Transpose to heads, MatMul, Softmax, MatMul, the output
  /// projection (opset 13); the causal mask as a constant of the built lengths.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  bool onnx_holds_built_size() const override { return options.use_causal_mask(); }
  int64_t flops_per_sample() const override;

  MultiHeadAttentionOptions options;
  /// The four projections (built with the layer): Keras's query, key, value and attention_output.
  EinsumDense query_dense{nullptr}, key_dense{nullptr}, value_dense{nullptr}, output_dense{nullptr};

 protected:
  Shape build_impl(const Shape& input_shape) override;
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;

 private:
  int64_t value_dim() const { return options.value_dim().value_or(options.key_dim()); }
  std::vector<EinsumDense> projections() const { return {query_dense, key_dense, value_dense, output_dense}; }
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace torchfit
