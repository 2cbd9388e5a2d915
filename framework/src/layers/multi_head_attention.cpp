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

EinsumDense mha_projection(const std::string& equation, EinsumOutputShape shape, const std::string& bias_axes,
                           bool use_bias, const std::string& name) {
  EinsumDenseOptions o(equation, std::move(shape));
  if (use_bias) o.bias_axes(bias_axes);
  o.name(name);
  return EinsumDense(o);
}

at::Tensor mha_project(const EinsumDense& dense, const char* equation, const at::Tensor& x) {
  at::Tensor y = at::einsum(equation, {x, dense->kernel});
  return dense->bias.defined() ? y + dense->bias : y;
}

// (N, steps, d) · kernel (d, h, k) + bias as MatMul / Add, Reshape to (N, steps, h, k), Transpose by `perm`.
std::string mha_onnx_heads(const Layer& l, io::OnnxGraph& g, const std::string& x, const EinsumDense& d,
                           const std::vector<int64_t>& perm) {
  using detail::onnx_name;
  const auto sizes = d->kernel.sizes();
  const at::Tensor w = d->kernel.reshape({sizes[0], sizes[1] * sizes[2]});
  std::string y = g.add_node("MatMul", {x, g.add_initializer(onnx_name(l, d->name() + "/kernel"), w)}, {},
                             onnx_name(l, d->name() + "/MatMul"));
  if (d->bias.defined()) {
    y = g.add_node("Add", {y, g.add_initializer(onnx_name(l, d->name() + "/bias"), d->bias.reshape({-1}))}, {},
                   onnx_name(l, d->name() + "/Add"));
  }
  y = g.add_node("Reshape", {y, g.add_int64s(onnx_name(l, d->name() + "/shape"), {0, -1, sizes[1], sizes[2]})}, {},
                 onnx_name(l, d->name() + "/Reshape"));
  return g.add_node("Transpose", {y}, {{"perm", perm}}, onnx_name(l, d->name() + "/Transpose"));
}

}  // namespace

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
  query_dense = register_module("query", mha_projection(kMhaProject, {{std::nullopt, h, kd}}, "de", b, "query"));
  key_dense = register_module("key", mha_projection(kMhaProject, {{std::nullopt, h, kd}}, "de", b, "key"));
  value_dense = register_module("value", mha_projection(kMhaProject, {{std::nullopt, h, vd}}, "de", b, "value"));
  output_dense = register_module("attention_output",
                                 mha_projection(kMhaOutput, {{std::nullopt, out}}, "e", b, "attention_output"));
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

// Keras's _compute_attention_mask from the inputs' masks: query (N, T, 1) & value (N, 1, S) & key (N, 1, S),
// broadcast to (N, T, S); forward_attention ands the causal mask.
at::Tensor MultiHeadAttentionImpl::forward_masked(const std::vector<at::Tensor>& xs,
                                                  const std::vector<at::Tensor>& masks) {
  if (xs.size() < 2 || xs.size() > 3 || masks.size() != xs.size()) return forward_multi(xs);
  const int64_t n = xs[0].size(0), t = xs[0].size(1), s = xs[1].size(1);
  at::Tensor allowed = at::ones({n, t, s}, xs[0].options().dtype(at::kBool));
  for (size_t i = 0; i < masks.size(); ++i) {
    if (!masks[i].defined()) continue;
    const at::Tensor m = masks[i].to(xs[0].device(), at::kBool);
    if (m.dim() != 2 || m.size(0) != n || m.size(1) != xs[i].size(1)) {
      throw ConfigError(describe() + ": the mask of input " + std::to_string(i) + " must be (N, steps) = " +
                        format_sizes({n, xs[i].size(1)}) + ", got " + format_sizes(m.sizes().vec()));
    }
    allowed = allowed.logical_and(i == 0 ? m.unsqueeze(2) : m.unsqueeze(1));
  }
  return forward_attention(xs[0], xs[1], xs.size() == 3 ? xs[2] : at::Tensor(), allowed);
}

at::Tensor MultiHeadAttentionImpl::forward_attention(const at::Tensor& query, const at::Tensor& value,
                                                     const at::Tensor& key_in, const at::Tensor& attention_mask,
                                                     at::Tensor* scores_out) {
  if (!built()) throw ConfigError(describe() + " is not built yet");
  const at::Tensor& key = key_in.defined() ? key_in : value;
  detail::check_attention_tensors(describe(), query, value, key);
  at::Tensor q =
      mha_project(query_dense, kMhaProject, query) * (1.0 / std::sqrt(static_cast<double>(options.key_dim())));
  const at::Tensor k = mha_project(key_dense, kMhaProject, key);
  const at::Tensor v = mha_project(value_dense, kMhaProject, value);
  at::Tensor scores = at::einsum(kMhaDot, {k, q});  // (N, h, T, S)
  const at::Tensor mask =
      detail::attention_mask(describe(), attention_mask, options.use_causal_mask(), query.size(1), value.size(1), q);
  if (mask.defined()) {
    const at::Tensor m = mask.dim() == 3 ? mask.unsqueeze(1) : mask;  // (N, 1, T, S) or (T, S)
    scores = detail::masked_softmax(scores, m);
  } else {
    scores = at::softmax(scores, -1);
  }
  if (scores_out) *scores_out = scores;
  if (options.dropout() > 0.0 && is_training()) scores = at::dropout(scores, options.dropout(), true);
  const at::Tensor o = at::einsum(kMhaCombine, {scores, v});  // (N, T, h, v)
  return mha_project(output_dense, kMhaOutput, o);
}

std::vector<std::string> MultiHeadAttentionImpl::keras_weight_names() const {
  std::vector<std::string> names;
  for (const char* p : {"query", "key", "value", "attention_output"}) {
    names.push_back(std::string(p) + "/kernel");
    if (options.use_bias()) names.push_back(std::string(p) + "/bias");
  }
  return names;
}

void MultiHeadAttentionImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights,
                                                    const KerasWeightOptions& o) {
  const size_t each = options.use_bias() ? 2 : 1;
  detail::expect_keras_weight_count(describe(), weights, 4 * each);
  auto dense = projections();
  for (size_t i = 0; i < dense.size(); ++i) {
    const std::vector<at::Tensor> part(weights.begin() + static_cast<std::ptrdiff_t>(i * each),
                                       weights.begin() + static_cast<std::ptrdiff_t>((i + 1) * each));
    try {
      dense[i]->set_keras_weights(part, o);
    } catch (const ConfigError& e) {
      throw ConfigError(describe() + ": " + e.what());
    }
  }
}

std::vector<at::Tensor> MultiHeadAttentionImpl::keras_weights_impl() const {
  std::vector<at::Tensor> out;
  for (const auto& d : projections()) {
    for (auto& w : d->keras_weights()) out.push_back(std::move(w));
  }
  return out;
}

int64_t MultiHeadAttentionImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto& s = input_shapes();
  const int64_t t = s[0][0], len = s[1][0], h = options.num_heads(), kd = options.key_dim(), vd = value_dim();
  const int64_t dk = s.size() == 3 ? s[2][1] : s[1][1];
  const int64_t proj = t * s[0][1] * h * kd + len * dk * h * kd + len * s[1][1] * h * vd;
  return 2 * (proj + h * t * len * (kd + vd) + t * h * vd * output_shape()[1]);
}

std::string MultiHeadAttentionImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const std::string& key = in.size() == 3 ? in[2] : in[1];
  std::string q = mha_onnx_heads(*this, g, in[0], query_dense, {0, 2, 1, 3});  // (N, h, T, k)
  q = g.add_node("Mul", {q, g.add_scalar(onnx_name(*this, "scale"), 1.0f / std::sqrt(float(options.key_dim())))}, {},
                 onnx_name(*this, "Mul"));
  const std::string k = mha_onnx_heads(*this, g, key, key_dense, {0, 2, 3, 1});      // (N, h, k, S)
  const std::string v = mha_onnx_heads(*this, g, in[1], value_dense, {0, 2, 1, 3});  // (N, h, S, v)
  std::string s = g.add_node("MatMul", {q, k}, {}, onnx_name(*this, "scores"));
  if (options.use_causal_mask()) {
    const int64_t t = input_shapes()[0][0], len = input_shapes()[1][0];
    s = g.add_node("Add", {s, g.add_initializer(onnx_name(*this, "causal_mask"), detail::causal_bias(t, len))}, {},
                   onnx_name(*this, "causal"));
  }
  s = g.add_node("Softmax", {s}, {{"axis", int64_t{-1}}}, onnx_name(*this, "Softmax"));
  std::string o = g.add_node("MatMul", {s, v}, {}, onnx_name(*this, "combine"));  // (N, h, T, v)
  o = g.add_node("Transpose", {o}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}, onnx_name(*this, "heads_last"));
  const auto ks = output_dense->kernel.sizes();  // (h, v, E)
  o = g.add_node("Reshape", {o, g.add_int64s(onnx_name(*this, "concat_heads"), {0, -1, ks[0] * ks[1]})}, {},
                 onnx_name(*this, "Reshape"));
  const at::Tensor w = output_dense->kernel.reshape({ks[0] * ks[1], ks[2]});
  o = g.add_node("MatMul", {o, g.add_initializer(onnx_name(*this, "attention_output/kernel"), w)}, {},
                 onnx_name(*this, "attention_output/MatMul"));
  if (output_dense->bias.defined()) {
    o = g.add_node("Add", {o, g.add_initializer(onnx_name(*this, "attention_output/bias"), output_dense->bias)}, {},
                   onnx_name(*this, "attention_output/Add"));
  }
  return o;
}

TORCHFIT_REGISTER_LAYER(MultiHeadAttention);

}  // namespace torchfit
