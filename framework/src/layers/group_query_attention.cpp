// GroupQueryAttention (group_query_attention.h), from Keras 3's
// keras/src/layers/attention/grouped_query_attention.py: its EinsumDense equations (build), the heads of the key
// and the value repeated in place (ops.repeat along axis 2), its dot-product and combine equations, the mask of
// _compute_attention_mask and the masked softmax (Softmax with a mask: −1e9 before, 0 after).
#include <torchfit/layers/group_query_attention.h>

#include <cmath>

#include <torchfit/layers/registry.h>

#include "layers/attention_mask.h"
#include "layers/layer_export.h"

namespace torchfit {
namespace {

// Keras's einsum equations (b batch, q query steps, k key steps, m model dim, u query heads, v key/value heads,
// h head dim).
constexpr const char* kGqaQuery = "bqm,muh->bquh";     // (N, T, d) · (d, u, h) → (N, T, u, h)
constexpr const char* kGqaKeyValue = "bkm,mvh->bkvh";  // (N, S, d) · (d, g, h) → (N, S, g, h)
constexpr const char* kGqaOutput = "bquh,uhm->bqm";    // (N, T, u, h) · (u, h, d) → (N, T, d)

void check_positive(const std::string& who, const char* what, int64_t v) {
  if (v <= 0) throw ConfigError(who + ": " + what + " must be a positive integer, got " + std::to_string(v));
}

}  // namespace

GroupQueryAttentionImpl::GroupQueryAttentionImpl(GroupQueryAttentionOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_positive(describe(), "head_dim", options.head_dim());
  check_positive(describe(), "num_query_heads", options.num_query_heads());
  check_positive(describe(), "num_key_value_heads", options.num_key_value_heads());
  if (options.num_query_heads() % options.num_key_value_heads() != 0) {
    throw ConfigError(describe() + ": num_query_heads must be divisible by num_key_value_heads, got " +
                      std::to_string(options.num_query_heads()) + " and " +
                      std::to_string(options.num_key_value_heads()));
  }
  if (!(options.dropout() >= 0.0 && options.dropout() < 1.0)) {
    throw ConfigError(describe() + ": dropout must be in [0, 1), got " + std::to_string(options.dropout()));
  }
}

Shape GroupQueryAttentionImpl::build_impl(const Shape& input_shape) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one input " +
                    format_shape(input_shape));
}

at::Tensor GroupQueryAttentionImpl::forward(const at::Tensor& x) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one tensor " +
                    format_sizes(x.sizes().vec()));
}

Shape GroupQueryAttentionImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  const auto inputs = detail::check_attention_inputs(describe(), shapes);
  const Shape &q = inputs[0], &v = inputs[1], &k = inputs[2];
  if (q[1] != v[1]) {  // Keras's compute_output_shape
    throw ConfigError(describe() + ": the value's features must be the query's, got query " + format_shape(q) +
                      " and value " + format_shape(v));
  }
  const int64_t u = options.num_query_heads(), g = options.num_key_value_heads(), h = options.head_dim();
  const bool b = options.use_bias();
  using detail::attention_projection;
  query_dense = register_module("query", attention_projection(kGqaQuery, {{std::nullopt, u, h}}, "uh", b, "query"));
  key_dense = register_module("key", attention_projection(kGqaKeyValue, {{std::nullopt, g, h}}, "vh", b, "key"));
  value_dense = register_module("value", attention_projection(kGqaKeyValue, {{std::nullopt, g, h}}, "vh", b, "value"));
  output_dense = register_module("attention_output",
                                 attention_projection(kGqaOutput, {{std::nullopt, q[1]}}, "m", b, "attention_output"));
  const std::vector<Shape> ins = {q, k, v, {q[0], u, h}};
  auto dense = projections();
  for (size_t i = 0; i < dense.size(); ++i) {
    for (const auto& [weight, init] : initializers()) dense[i]->set_initializer(weight, init);  // Keras: each
    dense[i]->build(ins[i]);
  }
  return {q[0], q[1]};
}

at::Tensor GroupQueryAttentionImpl::forward_multi(const std::vector<at::Tensor>& xs) {
  if (xs.size() < 2 || xs.size() > 3) {
    throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got " + std::to_string(xs.size()) +
                      " tensors");
  }
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor());
}

at::Tensor GroupQueryAttentionImpl::forward_masked(const std::vector<at::Tensor>& xs,
                                                   const std::vector<at::Tensor>& masks) {
  if (xs.size() < 2 || xs.size() > 3 || masks.size() != xs.size()) return forward_multi(xs);
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor(),
                           detail::inputs_attention_mask(describe(), xs, masks));
}

at::Tensor GroupQueryAttentionImpl::forward_attention(const at::Tensor& query, const at::Tensor& value,
                                                      const at::Tensor& key_in, const at::Tensor& attention_mask,
                                                      at::Tensor* scores_out) {
  if (!built()) throw ConfigError(describe() + " is not built yet");
  const at::Tensor& key = key_in.defined() ? key_in : value;
  detail::check_attention_tensors(describe(), query, value, key);
  using detail::attention_project;
  const at::Tensor q =
      attention_project(query_dense, kGqaQuery, query) * (1.0 / std::sqrt(static_cast<double>(options.head_dim())));
  // ops.repeat(x, r, axis=2): (N, S, g, h) → (N, S, g·r, h), head j at j·r … j·r + r − 1.
  const at::Tensor k = attention_project(key_dense, kGqaKeyValue, key).repeat_interleave(repeats(), 2);
  const at::Tensor v = attention_project(value_dense, kGqaKeyValue, value).repeat_interleave(repeats(), 2);
  const at::Tensor mask =
      detail::attention_mask(describe(), attention_mask, options.use_causal_mask(), query.size(1), value.size(1), q);
  const at::Tensor o =
      detail::attention_over_heads(q, k, v, mask, is_training() ? options.dropout() : 0.0, scores_out);  // (N, T, u, h)
  return attention_project(output_dense, kGqaOutput, o);
}

std::vector<std::string> GroupQueryAttentionImpl::keras_weight_names() const {
  return detail::projection_weight_names(options.use_bias());
}

void GroupQueryAttentionImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights,
                                                     const KerasWeightOptions& o) {
  detail::set_projection_weights(describe(), projections(), options.use_bias(), weights, o);
}

std::vector<at::Tensor> GroupQueryAttentionImpl::keras_weights_impl() const {
  return detail::projection_weights(projections());
}

// Multiply-adds ×2: the projections (the key's and the value's to g heads), then u heads of scores and combine.
int64_t GroupQueryAttentionImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto& s = input_shapes();
  const int64_t t = s[0][0], len = s[1][0], d = s[0][1], dk = s.size() == 3 ? s[2][1] : s[1][1];
  const int64_t u = options.num_query_heads(), g = options.num_key_value_heads(), h = options.head_dim();
  const int64_t proj = t * d * u * h + len * dk * g * h + len * s[1][1] * g * h + t * u * h * d;
  return 2 * (proj + u * t * len * 2 * h);
}

std::string GroupQueryAttentionImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_attention_heads;
  using detail::onnx_name;
  const std::string& key = in.size() == 3 ? in[2] : in[1];
  std::string q = onnx_attention_heads(*this, g, in[0], query_dense, {0, 2, 1, 3});  // (N, u, T, h)
  q = g.add_node("Mul", {q, g.add_scalar(onnx_name(*this, "scale"), 1.0f / std::sqrt(float(options.head_dim())))}, {},
                 onnx_name(*this, "Mul"));
  const std::string k = onnx_attention_heads(*this, g, key, key_dense, {0, 2, 3, 1}, repeats());      // (N, u, h, S)
  const std::string v = onnx_attention_heads(*this, g, in[1], value_dense, {0, 2, 1, 3}, repeats());  // (N, u, S, h)
  const at::Tensor causal =
      options.use_causal_mask() ? detail::causal_bias(input_shapes()[0][0], input_shapes()[1][0]) : at::Tensor();
  return detail::onnx_attention_output(*this, g, q, k, v, causal, output_dense);
}

TORCHFIT_REGISTER_LAYER(GroupQueryAttention);

}  // namespace torchfit
