#pragma once
/// @file attention.h
/// Attention and AdditiveAttention — single-head attention over [query, value(, key)], as
/// keras.layers.Attention (Luong-style) and keras.layers.AdditiveAttention (Bahdanau-style).
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_call.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Attention. Defaults as Keras 3 (keras/src/layers/attention/attention.py).
struct AttentionOptions : LayerOptions<AttentionOptions> {
  /// A trainable scalar `scale` (initial 1) multiplying the scores (dot) or the query + key (concat).
  /// Default false.
  TORCH_ARG(bool, use_scale) = false;
  /// "dot" (default): scores = query·keyᵀ; "concat": scores = concat_score_weight · Σ tanh(query + key)
  /// over the features (concat_score_weight a trainable scalar, initial 1).
  TORCH_ARG(std::string, score_mode) = "dot";
  /// Dropout rate on the attention distribution, training only (default 0, in [0, 1)).
  TORCH_ARG(double, dropout) = 0.0;
  /// Keras's call argument use_causal_mask (held here; Keras's JSON has it in the call's kwargs; tf.keras
  /// 2.0–2.9's constructor argument `causal` is read as it): query step i attends to value steps j <= i.
  TORCH_ARG(bool, use_causal_mask) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a("use_scale", use_scale());
    a("score_mode", score_mode());
    a("dropout", dropout());
    a("use_causal_mask", use_causal_mask());
  }
};

/// Options of AdditiveAttention. Defaults as Keras 3 (keras/src/layers/attention/additive_attention.py).
struct AdditiveAttentionOptions : LayerOptions<AdditiveAttentionOptions> {
  /// A trainable vector `scale` (dim), glorot_uniform, weighting tanh(query + key) per feature. Default true.
  TORCH_ARG(bool, use_scale) = true;
  /// Dropout rate on the attention distribution, training only (default 0, in [0, 1)).
  TORCH_ARG(double, dropout) = 0.0;
  /// As AttentionOptions::use_causal_mask.
  TORCH_ARG(bool, use_causal_mask) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a("use_scale", use_scale());
    a("dropout", dropout());
    a("use_causal_mask", use_causal_mask());
  }
};

/// Base of Attention and AdditiveAttention (Keras 3's Attention, which AdditiveAttention extends): called on
/// {query, value} or {query, value, key} (key defaults to value), sequences held in Keras's order:
///   query (N, T, d), value (N, S, d_v), key (N, S, d) → (N, T, d_v).
/// scores (N, T, S) from query and key (the subclass's), masked positions − 1e9 (Keras's _apply_scores),
/// softmax over S, dropout (training), · value. Masks: use_causal_mask; Keras's query and value masks from
/// the graph (forward_masked) or through forward_attention (C++); Keras files asking for
/// return_attention_scores (a second output) are refused.
/// Errors: ConfigError naming the layer: not 2 or 3 inputs, inputs that are not sequences, value and key of
/// different lengths, query and key of different features (build); dropout outside [0, 1) (construction).
class BaseAttentionImpl : public Layer, public KerasCallArguments {
 public:
  bool takes_list() const override { return true; }
  /// Refused: the layer takes {query, value} or {query, value, key} (ConfigError).
  at::Tensor forward(const at::Tensor& x) override;
  /// {query, value} or {query, value, key}, each (N, steps, features).
  at::Tensor forward_multi(const std::vector<at::Tensor>& xs) override;
  /// With the inputs' Keras masks: the query's and the value's, as forward_attention takes them (Keras's
  /// Attention uses no key mask); the output carries the query's mask.
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  bool supports_masking() const override { return true; }
  bool uses_mask() const override { return true; }
  /// The attention with Keras's masks: `key` undefined = value; `query_mask` (N, T) zeroes the output's
  /// masked steps, `value_mask` (N, S) keeps masked value steps out (both nonzero = kept, undefined = none);
  /// `scores`, when given, receives the attention distribution (N, T, S) (Keras's return_attention_scores).
  at::Tensor forward_attention(const at::Tensor& query, const at::Tensor& value, const at::Tensor& key = {},
                               const at::Tensor& query_mask = {}, const at::Tensor& value_mask = {},
                               at::Tensor* scores = nullptr);
  std::vector<std::string> keras_call_keywords() const override { return {}; }
  std::vector<std::string> keras_call_flags() const override { return {"use_causal_mask"}; }
  bool onnx_holds_built_size() const override { return causal_; }
  /// ONNX: the scores (the subclass's MatMul / Add, Tanh, MatMul), the causal mask as an additive constant
  /// of the built lengths, Softmax, MatMul with the value.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

 protected:
  BaseAttentionImpl(const char* class_name, const std::string& name, double dropout, bool causal);
  Shape build_impl(const Shape& input_shape) override;
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  /// Creates the weights for query features `dim`.
  virtual void make_weights(int64_t dim) = 0;
  /// The scores (N, T, S) of query (N, T, d) and key (N, S, d).
  virtual at::Tensor scores(const at::Tensor& query, const at::Tensor& key) const = 0;
  /// Their ONNX nodes: query (N, T, d), key (N, S, d) → (N, T, S).
  virtual std::string onnx_scores(io::OnnxGraph& graph, const std::string& query, const std::string& key) const = 0;
  /// Σ over the features of `tanh_of` (N, T, S, d) (already tanh'ed), each weighted by `weights` (d), as
  /// MatMul with (d, 1) and Squeeze.
  std::string onnx_feature_sum(io::OnnxGraph& graph, const std::string& tanh_of, const at::Tensor& weights) const;
  /// query (N, T, d) + key (N, S, d) broadcast to (N, T, S, d) (Unsqueeze both, Add).
  std::string onnx_pairwise_sum(io::OnnxGraph& graph, const std::string& query, const std::string& key) const;

 private:
  double dropout_;
  bool causal_;
};

/// Attention: dot-product (Luong) or concat attention, as keras.layers.Attention (see BaseAttentionImpl).
/// dot: scores = query·keyᵀ (· scale); concat: concat_score_weight · Σ_d tanh(scale · (query + key)).
/// Weights in Keras's order: scale () with use_scale, concat_score_weight () with score_mode concat.
/// Errors: as the base, and a score_mode other than dot / concat (construction).
class AttentionImpl : public BaseAttentionImpl {
  TORCHFIT_LAYER_CLASS(Attention);

 public:
  explicit AttentionImpl(AttentionOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  AttentionOptions options;
  /// The trainable scalars (undefined when not used); shape () as Keras's.
  at::Tensor scale, concat_score_weight;

 protected:
  void make_weights(int64_t dim) override;
  at::Tensor scores(const at::Tensor& query, const at::Tensor& key) const override;
  std::string onnx_scores(io::OnnxGraph& graph, const std::string& query, const std::string& key) const override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(Attention);

/// AdditiveAttention: Bahdanau-style attention, as keras.layers.AdditiveAttention (see BaseAttentionImpl):
/// scores = Σ_d scale_d · tanh(query + key) (scale (d) glorot_uniform with use_scale, else 1).
/// Weights: scale (d) with use_scale.
class AdditiveAttentionImpl : public BaseAttentionImpl {
  TORCHFIT_LAYER_CLASS(AdditiveAttention);

 public:
  explicit AdditiveAttentionImpl(AdditiveAttentionOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  AdditiveAttentionOptions options;
  /// The trainable per-feature scale (undefined without use_scale).
  at::Tensor scale;

 protected:
  void make_weights(int64_t dim) override;
  at::Tensor scores(const at::Tensor& query, const at::Tensor& key) const override;
  std::string onnx_scores(io::OnnxGraph& graph, const std::string& query, const std::string& key) const override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(AdditiveAttention);

}  // namespace torchfit
