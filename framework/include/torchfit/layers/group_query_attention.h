#pragma once
/// @file group_query_attention.h
/// GroupQueryAttention — attention whose key and value heads serve groups of query heads (Ainslie et al.
/// 2023), as keras.layers.GroupQueryAttention (Keras 3).
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/einsum_dense.h>
#include <torchfit/layers/keras_call.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of GroupQueryAttention. Required: head_dim, num_query_heads, num_key_value_heads. Defaults as
/// Keras 3 (keras/src/layers/attention/grouped_query_attention.py).
struct GroupQueryAttentionOptions : LayerOptions<GroupQueryAttentionOptions> {
  GroupQueryAttentionOptions(int64_t head_dim, int64_t num_query_heads, int64_t num_key_value_heads)
      : head_dim_(head_dim), num_query_heads_(num_query_heads), num_key_value_heads_(num_key_value_heads) {}
  /// For the registry only (layer_args.h): leaves the required arguments unset, to be read from a config.
  explicit GroupQueryAttentionOptions(FromConfig) {}
  /// Size of each head of the query, the key and the value (> 0); the query is scaled by 1/sqrt(head_dim).
  TORCH_ARG(int64_t, head_dim) = 0;
  /// Number of query heads (> 0, a multiple of num_key_value_heads).
  TORCH_ARG(int64_t, num_query_heads) = 0;
  /// Number of key and value heads, the groups (> 0): 1 is multi-query attention, num_query_heads
  /// multi-head attention.
  TORCH_ARG(int64_t, num_key_value_heads) = 0;
  /// Dropout rate on the attention probabilities, training only (default 0, in [0, 1)).
  TORCH_ARG(double, dropout) = 0.0;
  /// Whether the four projections have biases (default true).
  TORCH_ARG(bool, use_bias) = true;
  /// Keras's call argument use_causal_mask (held here; Keras's JSON has it in the call's kwargs): query step
  /// i attends to key steps j <= i only. Default false.
  TORCH_ARG(bool, use_causal_mask) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("head_dim", head_dim());
    a.required("num_query_heads", num_query_heads());
    a.required("num_key_value_heads", num_key_value_heads());
    a("dropout", dropout());
    a("use_bias", use_bias());
    a("use_causal_mask", use_causal_mask());
  }
};

/// Grouped-query attention as Keras 3's GroupQueryAttention (Python class GroupedQueryAttention, whose
/// snake_case name "grouped_query_attention" is Keras's automatic layer name and its .weights.h5 key): called
/// on {query, value} or {query, value, key} (key defaults to value), sequences held in Keras's order:
///   query (N, T, d), value (N, S, d), key (N, S, d_k) → (N, T, d) (value's features must be the query's).
/// With u = num_query_heads, g = num_key_value_heads, r = u / g, h = head_dim: q = query·W_q + b_q
/// (N, T, u, h), k = key·W_k + b_k and v = value·W_v + b_v (N, S, g, h); k and v repeated r times along the
/// heads as Keras's ops.repeat (each head in place: key head j serves query heads j·r … j·r + r − 1, not a
/// tile); scores = softmax over S of (q / sqrt(h))·kᵀ per query head (N, u, T, S), masked positions set to
/// −1e9 before the softmax and to 0 after it (Keras's Softmax with a mask); dropout on the scores
/// (training); out = (scores·v) (N, T, u, h) · W_o + b_o.
/// Weights: four EinsumDense sublayers with Keras's equations and names: query "bqm,muh->bquh" kernel
/// (d, u, h), bias (u, h); key and value "bkm,mvh->bkvh" kernels (d_k, g, h) and (d, g, h), biases (g, h);
/// attention_output "bquh,uhm->bqm" kernel (u, h, d), bias (d). Kernels glorot_uniform (Keras's fans of the
/// 3-D kernel), biases zeros; kernel_/bias_initializer and _regularizer apply to all four, as Keras passes them
/// to each sublayer. Keras weights in Keras's order (layer.weights): query kernel, bias, key, value,
/// attention_output; a Keras 3 .weights.h5 keeps them in the sublayers _query_dense, _key_dense,
/// _value_dense, _output_dense (vars/0 kernel, vars/1 bias).
/// Masks: use_causal_mask; the inputs' Keras masks from the graph (forward_masked); an explicit
/// attention_mask through forward_attention (C++) — the graph has no attention_mask input, and Keras files
/// that give one are refused. return_attention_scores: forward_attention gives the scores; a graph node has one
/// output, so a Keras file asking for them is refused. Keras's flash_attention (not in its get_config)
/// changes only the kernel Keras runs: a Keras config's is read and dropped (true with dropout > 0 refused, as
/// Keras). A query step that attends to nothing gets zero probabilities (Keras's path with scores or dropout;
/// Keras's fused dot_product_attention path differs there, by backend).
/// Errors: ConfigError naming the layer for head_dim, num_query_heads or num_key_value_heads <= 0,
/// num_query_heads not divisible by num_key_value_heads (Keras's ValueError), dropout outside [0, 1)
/// (construction); not 2 or 3 inputs, inputs that are not sequences (steps, features), value and key of
/// different lengths, value features other than the query's (Keras's compute_output_shape) (build).
class GroupQueryAttentionImpl : public Layer, public KerasCallArguments {
  TORCHFIT_LAYER_CLASS(GroupQueryAttention);

 public:
  explicit GroupQueryAttentionImpl(GroupQueryAttentionOptions options);
  bool takes_list() const override { return true; }
  /// Refused: GroupQueryAttention takes {query, value} or {query, value, key} (ConfigError).
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
  /// given, receives the attention probabilities (N, num_query_heads, T, S) (Keras's return_attention_scores).
  at::Tensor forward_attention(const at::Tensor& query, const at::Tensor& value, const at::Tensor& key = {},
                               const at::Tensor& attention_mask = {}, at::Tensor* scores = nullptr);
  nlohmann::json config() const override { return base_config(options); }
  std::vector<std::string> keras_call_keywords() const override { return {"query", "value", "key"}; }
  std::vector<std::string> keras_call_flags() const override { return {"use_causal_mask"}; }
  /// "query/kernel", "query/bias", "key/…", "value/…", "attention_output/…" (no biases without use_bias).
  std::vector<std::string> keras_weight_names() const override;
  /// ONNX: MultiHeadAttention's nodes (opset 13), the key's and the value's kernels and biases written with
  /// each head repeated r times in place (Keras's ops.repeat of their output, the same values; OpenCV 4.6's
  /// Gather takes one index, so no Gather after them); the causal mask as a constant of the built lengths.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  bool onnx_holds_built_size() const override { return options.use_causal_mask(); }
  int64_t flops_per_sample() const override;

  GroupQueryAttentionOptions options;
  /// The four projections (built with the layer): Keras's query, key, value and attention_output.
  EinsumDense query_dense{nullptr}, key_dense{nullptr}, value_dense{nullptr}, output_dense{nullptr};

 protected:
  Shape build_impl(const Shape& input_shape) override;
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;

 private:
  int64_t repeats() const { return options.num_query_heads() / options.num_key_value_heads(); }
  std::vector<EinsumDense> projections() const { return {query_dense, key_dense, value_dense, output_dense}; }
};
TORCH_MODULE(GroupQueryAttention);

}  // namespace torchfit
