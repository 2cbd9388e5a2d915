// Attention and AdditiveAttention (attention.h), from Keras 3's keras/src/layers/attention/attention.py
// (_calculate_scores, _apply_scores, _calculate_score_mask, call) and additive_attention.py.
#include <torchfit/layers/attention.h>

#include <cmath>

#include <torchfit/layers/registry.h>

#include "layers/attention_mask.h"
#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

BaseAttentionImpl::BaseAttentionImpl(const char* class_name, const std::string& name, double dropout, bool causal)
    : Layer(class_name, name), dropout_(dropout), causal_(causal) {
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw ConfigError(describe() + ": dropout must be in [0, 1), got " + std::to_string(dropout));
  }
}

Shape BaseAttentionImpl::build_impl(const Shape& input_shape) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one input " +
                    format_shape(input_shape));
}

at::Tensor BaseAttentionImpl::forward(const at::Tensor& x) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one tensor " +
                    format_sizes(x.sizes().vec()));
}

Shape BaseAttentionImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  const auto inputs = detail::check_attention_inputs(describe(), shapes);
  if (inputs[0][1] != inputs[2][1]) {
    throw ConfigError(describe() + ": query and key must have the same features, got query " + format_shape(inputs[0]) +
                      " and key " + format_shape(inputs[2]));
  }
  make_weights(inputs[0][1]);
  return {inputs[0][0], inputs[1][1]};
}

at::Tensor BaseAttentionImpl::forward_multi(const std::vector<at::Tensor>& xs) {
  if (xs.size() < 2 || xs.size() > 3) {
    throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got " + std::to_string(xs.size()) +
                      " tensors");
  }
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor());
}

at::Tensor BaseAttentionImpl::forward_masked(const std::vector<at::Tensor>& xs, const std::vector<at::Tensor>& masks) {
  if (xs.size() < 2 || xs.size() > 3 || masks.size() != xs.size()) return forward_multi(xs);
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor(), masks[0], masks[1]);
}

at::Tensor BaseAttentionImpl::forward_attention(const at::Tensor& query, const at::Tensor& value,
                                                const at::Tensor& key_in, const at::Tensor& query_mask,
                                                const at::Tensor& value_mask, at::Tensor* scores_out) {
  if (!built()) throw ConfigError(describe() + " is not built yet");
  const at::Tensor& key = key_in.defined() ? key_in : value;
  detail::check_attention_tensors(describe(), query, value, key);
  const int64_t n = query.size(0), t = query.size(1), s = value.size(1);
  at::Tensor sc = scores(query, key);  // (N, T, S)
  at::Tensor keep;
  if (value_mask.defined()) {
    if (value_mask.sizes() != at::IntArrayRef({n, s})) {
      throw ConfigError(describe() + ": the value mask must be (N, S) = (" + std::to_string(n) + ", " +
                        std::to_string(s) + "), got " + format_sizes(value_mask.sizes().vec()));
    }
    keep = value_mask.to(query.device()).ne(0).unsqueeze(1);  // (N, 1, S)
  }
  if (causal_) {
    const at::Tensor c = detail::causal_mask(t, s, query.options()).unsqueeze(0);  // (1, T, S)
    keep = keep.defined() ? keep.logical_and(c) : c;
  }
  if (keep.defined()) sc = at::where(keep, sc, sc - 1e9);  // Keras: scores − max_value where masked
  at::Tensor weights = at::softmax(sc, -1);
  if (scores_out) *scores_out = weights;
  if (dropout_ > 0.0 && is_training()) weights = at::dropout(weights, dropout_, true);
  at::Tensor out = at::matmul(weights, value);
  if (query_mask.defined()) {
    if (query_mask.sizes() != at::IntArrayRef({n, t})) {
      throw ConfigError(describe() + ": the query mask must be (N, T) = (" + std::to_string(n) + ", " +
                        std::to_string(t) + "), got " + format_sizes(query_mask.sizes().vec()));
    }
    out = at::where(query_mask.to(query.device()).ne(0).unsqueeze(-1), out, at::zeros({}, out.options()));
  }
  return out;
}

std::string BaseAttentionImpl::onnx_pairwise_sum(io::OnnxGraph& g, const std::string& q, const std::string& k) const {
  using detail::onnx_name;
  const std::string qu = g.add_node("Unsqueeze", {q, g.add_int64s(onnx_name(*this, "query_axes"), {2})}, {},
                                    onnx_name(*this, "query_Unsqueeze"));  // (N, T, 1, d)
  const std::string ku = g.add_node("Unsqueeze", {k, g.add_int64s(onnx_name(*this, "key_axes"), {1})}, {},
                                    onnx_name(*this, "key_Unsqueeze"));  // (N, 1, S, d)
  return g.add_node("Add", {qu, ku}, {}, onnx_name(*this, "pairwise"));
}

std::string BaseAttentionImpl::onnx_feature_sum(io::OnnxGraph& g, const std::string& x, const at::Tensor& w) const {
  using detail::onnx_name;
  const std::string y =
      g.add_node("MatMul", {x, g.add_initializer(onnx_name(*this, "feature_weights"), w.reshape({-1, 1}))}, {},
                 onnx_name(*this, "feature_sum"));  // (N, T, S, 1)
  return g.add_node("Squeeze", {y, g.add_int64s(onnx_name(*this, "sum_axes"), {3})}, {}, onnx_name(*this, "Squeeze"));
}

std::string BaseAttentionImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const std::string& key = in.size() == 3 ? in[2] : in[1];
  std::string s = onnx_scores(g, in[0], key);
  if (causal_) {
    const at::Tensor bias = detail::causal_bias(input_shapes()[0][0], input_shapes()[1][0]);
    s = g.add_node("Add", {s, g.add_initializer(onnx_name(*this, "causal_mask"), bias)}, {},
                   onnx_name(*this, "causal"));
  }
  s = g.add_node("Softmax", {s}, {{"axis", int64_t{-1}}}, onnx_name(*this, "Softmax"));
  return g.add_node("MatMul", {s, in[1]}, {}, onnx_name(*this, "MatMul"));
}

// --- Attention

AttentionImpl::AttentionImpl(AttentionOptions o)
    : BaseAttentionImpl(keras_class_name, o.name(), o.dropout(), o.use_causal_mask()), options(std::move(o)) {
  set_declared_input_shape(options.input_shape());
  if (options.score_mode() != "dot" && options.score_mode() != "concat") {
    throw ConfigError(describe() + ": score_mode must be \"dot\" or \"concat\", got \"" + options.score_mode() + "\"");
  }
}

void AttentionImpl::make_weights(int64_t) {
  if (options.use_scale()) scale = register_parameter("scale", at::ones({}));
  if (options.score_mode() == "concat") concat_score_weight = register_parameter("concat_score_weight", at::ones({}));
}

at::Tensor AttentionImpl::scores(const at::Tensor& q, const at::Tensor& k) const {
  if (options.score_mode() == "dot") {
    at::Tensor s = at::matmul(q, k.transpose(-2, -1));
    return scale.defined() ? s * scale : s;
  }
  at::Tensor sum = q.unsqueeze(-2) + k.unsqueeze(-3);  // (N, T, S, d)
  if (scale.defined()) sum = sum * scale;
  return concat_score_weight * at::tanh(sum).sum(-1);
}

std::string AttentionImpl::onnx_scores(io::OnnxGraph& g, const std::string& q, const std::string& k) const {
  using detail::onnx_name;
  if (options.score_mode() == "dot") {
    const std::string kt =
        g.add_node("Transpose", {k}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, onnx_name(*this, "key_T"));
    std::string s = g.add_node("MatMul", {q, kt}, {}, onnx_name(*this, "scores"));
    if (scale.defined())
      s = g.add_node("Mul", {s, g.add_initializer(onnx_name(*this, "scale"), scale.reshape({1}))}, {},
                     onnx_name(*this, "scaled"));
    return s;
  }
  std::string sum = onnx_pairwise_sum(g, q, k);
  if (scale.defined())
    sum = g.add_node("Mul", {sum, g.add_initializer(onnx_name(*this, "scale"), scale.reshape({1}))}, {},
                     onnx_name(*this, "scaled"));
  const std::string th = g.add_node("Tanh", {sum}, {}, onnx_name(*this, "Tanh"));
  const int64_t dim = input_shapes()[0][1];
  return onnx_feature_sum(g, th, concat_score_weight.detach() * at::ones({dim}));
}

void AttentionImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights,
                                    (scale.defined() ? 1 : 0) + (concat_score_weight.defined() ? 1 : 0));
  size_t i = 0;
  if (scale.defined()) detail::assign_keras_weight(describe(), scale, weights[i++], "scale");
  if (concat_score_weight.defined())
    detail::assign_keras_weight(describe(), concat_score_weight, weights[i], "concat_score_weight");
}

std::vector<at::Tensor> AttentionImpl::keras_weights_impl() const {
  std::vector<at::Tensor> w;
  if (scale.defined()) w.push_back(detail::keras_weight_copy(scale));
  if (concat_score_weight.defined()) w.push_back(detail::keras_weight_copy(concat_score_weight));
  return w;
}

// --- AdditiveAttention

AdditiveAttentionImpl::AdditiveAttentionImpl(AdditiveAttentionOptions o)
    : BaseAttentionImpl(keras_class_name, o.name(), o.dropout(), o.use_causal_mask()), options(std::move(o)) {
  set_declared_input_shape(options.input_shape());
}

void AdditiveAttentionImpl::make_weights(int64_t dim) {
  if (options.use_scale()) scale = register_parameter("scale", detail::glorot_uniform({dim}, dim, dim));
}

at::Tensor AdditiveAttentionImpl::scores(const at::Tensor& q, const at::Tensor& k) const {
  const at::Tensor th = at::tanh(q.unsqueeze(-2) + k.unsqueeze(-3));  // (N, T, S, d)
  return (scale.defined() ? th * scale : th).sum(-1);
}

std::string AdditiveAttentionImpl::onnx_scores(io::OnnxGraph& g, const std::string& q, const std::string& k) const {
  const std::string th = g.add_node("Tanh", {onnx_pairwise_sum(g, q, k)}, {}, detail::onnx_name(*this, "Tanh"));
  return onnx_feature_sum(g, th, scale.defined() ? scale.detach() : at::ones({input_shapes()[0][1]}));
}

void AdditiveAttentionImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, scale.defined() ? 1 : 0);
  if (scale.defined()) detail::assign_keras_weight(describe(), scale, weights[0], "scale");
}

std::vector<at::Tensor> AdditiveAttentionImpl::keras_weights_impl() const {
  if (!scale.defined()) return {};
  return {detail::keras_weight_copy(scale)};
}

TORCHFIT_REGISTER_LAYER(Attention);
TORCHFIT_REGISTER_LAYER(AdditiveAttention);

}  // namespace torchfit
