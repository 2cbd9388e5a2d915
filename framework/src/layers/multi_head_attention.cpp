// MultiHeadAttention (multi_head_attention.h), from Keras 3's keras/src/layers/attention/multi_head_attention.py:
// its projection equations (_build_proj_equation), attention equations (_build_attention_equation), causal
// mask (_compute_causal_mask) and masked softmax (Softmax with a mask: −1e9 before, 0 after).
#include <torchfit/layers/multi_head_attention.h>

#include <cmath>

#include <torchfit/layers/registry.h>

#include "layers/attention_mask.h"
#include "layers/layer_export.h"

namespace torchfit {
namespace {

// Keras's einsum equations for rank-3 tensors (N, steps, features), attention over the steps.
constexpr const char* kMhaProject = "abc,cde->abde";    // (N, T, d) · (d, h, k) → (N, T, h, k)
constexpr const char* kMhaOutput = "abcd,cde->abe";     // (N, T, h, v) · (h, v, E) → (N, T, E)
constexpr const char* kMhaDot = "aecd,abcd->acbe";      // key (N, S, h, k), query (N, T, h, k) → (N, h, T, S)
constexpr const char* kMhaCombine = "acbe,aecd->abcd";  // scores (N, h, T, S), value (N, S, h, v) → (N, T, h, v)

// The attention axes Keras resolves to the default for a sequence: null, 1, −2, [1], [−2].
bool mha_default_axes(const std::optional<KerasAxes>& axes) {
  if (!axes) return true;
  return axes->axes.size() == 1 && (axes->axes[0] == 1 || axes->axes[0] == -2);
}

}  // namespace

namespace detail {

EinsumDense attention_projection(const std::string& equation, EinsumOutputShape shape, const std::string& bias_axes,
                                 bool use_bias, const std::string& name) {
  EinsumDenseOptions o(equation, std::move(shape));
  if (use_bias) o.bias_axes(bias_axes);
  o.name(name);
  return EinsumDense(o);
}

at::Tensor attention_project(const EinsumDense& dense, const std::string& equation, const at::Tensor& x) {
  at::Tensor y = at::einsum(equation, {x, dense->kernel});
  return dense->bias.defined() ? y + dense->bias : y;
}

at::Tensor attention_over_heads(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                                double dropout, at::Tensor* scores_out) {
  at::Tensor scores = at::einsum(kMhaDot, {k, q});  // (N, h, T, S)
  if (mask.defined()) {
    const at::Tensor m = mask.dim() == 3 ? mask.unsqueeze(1) : mask;  // (N, 1, T, S) or (T, S)
    scores = masked_softmax(scores, m);
  } else {
    scores = at::softmax(scores, -1);
  }
  if (scores_out) *scores_out = scores;
  if (dropout > 0.0) scores = at::dropout(scores, dropout, true);
  return at::einsum(kMhaCombine, {scores, v});  // (N, T, h, v)
}

std::string onnx_attention_heads(const Layer& l, io::OnnxGraph& g, const std::string& x, const EinsumDense& d,
                                 const std::vector<int64_t>& perm, int64_t repeats) {
  // Each head repeated in place (np.repeat along the heads) before the projection: the same values as
  // repeating its output, in a MatMul OpenCV 4.6 runs (its Gather takes one index only).
  const at::Tensor kernel = repeats > 1 ? d->kernel.repeat_interleave(repeats, 1) : d->kernel;
  const auto sizes = kernel.sizes();
  const at::Tensor w = kernel.reshape({sizes[0], sizes[1] * sizes[2]});
  std::string y = g.add_node("MatMul", {x, g.add_initializer(onnx_name(l, d->name() + "/kernel"), w)}, {},
                             onnx_name(l, d->name() + "/MatMul"));
  if (d->bias.defined()) {
    const at::Tensor b = repeats > 1 ? d->bias.repeat_interleave(repeats, 0) : d->bias;
    y = g.add_node("Add", {y, g.add_initializer(onnx_name(l, d->name() + "/bias"), b.reshape({-1}))}, {},
                   onnx_name(l, d->name() + "/Add"));
  }
  y = g.add_node("Reshape", {y, g.add_int64s(onnx_name(l, d->name() + "/shape"), {0, -1, sizes[1], sizes[2]})}, {},
                 onnx_name(l, d->name() + "/Reshape"));
  return g.add_node("Transpose", {y}, {{"perm", perm}}, onnx_name(l, d->name() + "/Transpose"));
}

std::string onnx_attention_output(const Layer& l, io::OnnxGraph& g, const std::string& q, const std::string& k,
                                  const std::string& v, const at::Tensor& causal_bias, const EinsumDense& output) {
  std::string s = g.add_node("MatMul", {q, k}, {}, onnx_name(l, "scores"));
  if (causal_bias.defined()) {
    s = g.add_node("Add", {s, g.add_initializer(onnx_name(l, "causal_mask"), causal_bias)}, {}, onnx_name(l, "causal"));
  }
  s = g.add_node("Softmax", {s}, {{"axis", int64_t{-1}}}, onnx_name(l, "Softmax"));
  std::string o = g.add_node("MatMul", {s, v}, {}, onnx_name(l, "combine"));  // (N, h, T, v)
  o = g.add_node("Transpose", {o}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, onnx_name(l, "heads_last"));
  const auto ks = output->kernel.sizes();  // (h, v, E)
  o = g.add_node("Reshape", {o, g.add_int64s(onnx_name(l, "concat_heads"), {0, -1, ks[0] * ks[1]})}, {},
                 onnx_name(l, "Reshape"));
  const at::Tensor w = output->kernel.reshape({ks[0] * ks[1], ks[2]});
  o = g.add_node("MatMul", {o, g.add_initializer(onnx_name(l, output->name() + "/kernel"), w)}, {},
                 onnx_name(l, output->name() + "/MatMul"));
  if (output->bias.defined()) {
    o = g.add_node("Add", {o, g.add_initializer(onnx_name(l, output->name() + "/bias"), output->bias)}, {},
                   onnx_name(l, output->name() + "/Add"));
  }
  return o;
}

}  // namespace detail

MultiHeadAttentionImpl::MultiHeadAttentionImpl(MultiHeadAttentionOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.num_heads() <= 0) {
    throw ConfigError(describe() + ": num_heads must be a positive integer, got " +
                      std::to_string(options.num_heads()));
  }
  if (options.key_dim() <= 0) {
    throw ConfigError(describe() + ": key_dim must be a positive integer, got " + std::to_string(options.key_dim()));
  }
  if (options.value_dim() && *options.value_dim() <= 0) {
    throw ConfigError(describe() + ": value_dim must be a positive integer or null, got " +
                      std::to_string(*options.value_dim()));
  }
  if (!(options.dropout() >= 0.0 && options.dropout() < 1.0)) {
    throw ConfigError(describe() + ": dropout must be in [0, 1), got " + std::to_string(options.dropout()));
  }
  if (options.output_shape()) {
    const auto& dims = options.output_shape()->axes;
    if (dims.size() != 1 || dims[0] <= 0) {
      throw ConfigError(describe() + ": output_shape " + nlohmann::json(*options.output_shape()).dump() +
                        " is not supported (one positive size: the output's features of a sequence)");
    }
  }
  if (!mha_default_axes(options.attention_axes())) {
    throw ConfigError(describe() + ": attention_axes " + nlohmann::json(*options.attention_axes()).dump() +
                      " is not supported (null: attention over the steps of a sequence, Keras's default)");
  }
}

Shape MultiHeadAttentionImpl::build_impl(const Shape& input_shape) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one input " +
                    format_shape(input_shape));
}

at::Tensor MultiHeadAttentionImpl::forward(const at::Tensor& x) {
  throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got one tensor " +
                    format_sizes(x.sizes().vec()));
}

Shape MultiHeadAttentionImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  const auto inputs = detail::check_attention_inputs(describe(), shapes);
  const Shape &q = inputs[0], &v = inputs[1], &k = inputs[2];
  const int64_t h = options.num_heads(), kd = options.key_dim(), vd = value_dim();
  const int64_t out = options.output_shape() ? options.output_shape()->axes[0] : q[1];
  const bool b = options.use_bias();
  using detail::attention_projection;
  query_dense = register_module("query", attention_projection(kMhaProject, {{std::nullopt, h, kd}}, "de", b, "query"));
  key_dense = register_module("key", attention_projection(kMhaProject, {{std::nullopt, h, kd}}, "de", b, "key"));
  value_dense = register_module("value", attention_projection(kMhaProject, {{std::nullopt, h, vd}}, "de", b, "value"));
  output_dense = register_module("attention_output",
                                 attention_projection(kMhaOutput, {{std::nullopt, out}}, "e", b, "attention_output"));
  const std::vector<Shape> ins = {q, k, v, {q[0], h, vd}};
  auto dense = projections();
  for (size_t i = 0; i < dense.size(); ++i) {
    for (const auto& [weight, init] : initializers()) dense[i]->set_initializer(weight, init);  // Keras: each
    dense[i]->build(ins[i]);
  }
  return {q[0], out};
}

at::Tensor MultiHeadAttentionImpl::forward_multi(const std::vector<at::Tensor>& xs) {
  if (xs.size() < 2 || xs.size() > 3) {
    throw ConfigError(describe() + " takes {query, value} or {query, value, key}, got " + std::to_string(xs.size()) +
                      " tensors");
  }
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor());
}

at::Tensor MultiHeadAttentionImpl::forward_masked(const std::vector<at::Tensor>& xs,
                                                  const std::vector<at::Tensor>& masks) {
  if (xs.size() < 2 || xs.size() > 3 || masks.size() != xs.size()) return forward_multi(xs);
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor(),
                           detail::inputs_attention_mask(describe(), xs, masks));
}

at::Tensor MultiHeadAttentionImpl::forward_attention(const at::Tensor& query, const at::Tensor& value,
                                                     const at::Tensor& key_in, const at::Tensor& attention_mask,
                                                     at::Tensor* scores_out) {
  if (!built()) throw ConfigError(describe() + " is not built yet");
  const at::Tensor& key = key_in.defined() ? key_in : value;
  detail::check_attention_tensors(describe(), query, value, key);
  using detail::attention_project;
  const at::Tensor q =
      attention_project(query_dense, kMhaProject, query) * (1.0 / std::sqrt(static_cast<double>(options.key_dim())));
  const at::Tensor k = attention_project(key_dense, kMhaProject, key);
  const at::Tensor v = attention_project(value_dense, kMhaProject, value);
  const at::Tensor mask =
      detail::attention_mask(describe(), attention_mask, options.use_causal_mask(), query.size(1), value.size(1), q);
  const at::Tensor o =
      detail::attention_over_heads(q, k, v, mask, is_training() ? options.dropout() : 0.0, scores_out);  // (N, T, h, v)
  return attention_project(output_dense, kMhaOutput, o);
}

std::vector<std::string> MultiHeadAttentionImpl::keras_weight_names() const {
  return detail::projection_weight_names(options.use_bias());
}

void MultiHeadAttentionImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights,
                                                    const KerasWeightOptions& o) {
  detail::set_projection_weights(describe(), projections(), options.use_bias(), weights, o);
}

std::vector<at::Tensor> MultiHeadAttentionImpl::keras_weights_impl() const {
  return detail::projection_weights(projections());
}

namespace detail {

std::vector<std::string> projection_weight_names(bool use_bias) {
  std::vector<std::string> names;
  for (const char* p : {"query", "key", "value", "attention_output"}) {
    names.push_back(std::string(p) + "/kernel");
    if (use_bias) names.push_back(std::string(p) + "/bias");
  }
  return names;
}

void set_projection_weights(const std::string& who, std::vector<EinsumDense> dense, bool use_bias,
                            const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const size_t each = use_bias ? 2 : 1;
  expect_keras_weight_count(who, weights, dense.size() * each);
  for (size_t i = 0; i < dense.size(); ++i) {
    const std::vector<at::Tensor> part(weights.begin() + static_cast<std::ptrdiff_t>(i * each),
                                       weights.begin() + static_cast<std::ptrdiff_t>((i + 1) * each));
    try {
      dense[i]->set_keras_weights(part, o);
    } catch (const ConfigError& e) {
      throw ConfigError(who + ": " + e.what());
    }
  }
}

std::vector<at::Tensor> projection_weights(const std::vector<EinsumDense>& dense) {
  std::vector<at::Tensor> out;
  for (const auto& d : dense) {
    for (auto& w : d->keras_weights()) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace detail

int64_t MultiHeadAttentionImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto& s = input_shapes();
  const int64_t t = s[0][0], len = s[1][0], h = options.num_heads(), kd = options.key_dim(), vd = value_dim();
  const int64_t dk = s.size() == 3 ? s[2][1] : s[1][1];
  const int64_t proj = t * s[0][1] * h * kd + len * dk * h * kd + len * s[1][1] * h * vd;
  return 2 * (proj + h * t * len * (kd + vd) + t * h * vd * output_shape()[1]);
}

std::string MultiHeadAttentionImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_attention_heads;
  using detail::onnx_name;
  const std::string& key = in.size() == 3 ? in[2] : in[1];
  std::string q = onnx_attention_heads(*this, g, in[0], query_dense, {0, 2, 1, 3});  // (N, h, T, k)
  q = g.add_node("Mul", {q, g.add_scalar(onnx_name(*this, "scale"), 1.0f / std::sqrt(float(options.key_dim())))}, {},
                 onnx_name(*this, "Mul"));
  const std::string k = onnx_attention_heads(*this, g, key, key_dense, {0, 2, 3, 1});      // (N, h, k, S)
  const std::string v = onnx_attention_heads(*this, g, in[1], value_dense, {0, 2, 1, 3});  // (N, h, S, v)
  const at::Tensor causal =
      options.use_causal_mask() ? detail::causal_bias(input_shapes()[0][0], input_shapes()[1][0]) : at::Tensor();
  return detail::onnx_attention_output(*this, g, q, k, v, causal, output_dense);
}

TORCHFIT_REGISTER_LAYER(MultiHeadAttention);

}  // namespace torchfit
