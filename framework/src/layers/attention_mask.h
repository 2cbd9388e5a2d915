#pragma once
// What the attention layers share (internal): their inputs' checks, Keras's causal mask and the masked
// softmaxes (attention.cpp, multi_head_attention.cpp, group_query_attention.cpp), and the heads' projections,
// attention and ONNX nodes of MultiHeadAttention and GroupQueryAttention (defined in multi_head_attention.cpp).
#include <array>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include <torchfit/error.h>
#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/einsum_dense.h>
#include <torchfit/layers/shape.h>

namespace torchfit::detail {

/// {query, value, key} per-sample shapes from 2 or 3 inputs (key = value when absent), each a sequence
/// (steps, features), value and key of the same length. Errors: ConfigError naming `who` and the shapes.
inline std::array<Shape, 3> check_attention_inputs(const std::string& who, const std::vector<Shape>& shapes) {
  if (shapes.size() < 2 || shapes.size() > 3) {
    throw ConfigError(who + " takes {query, value} or {query, value, key}, got " + std::to_string(shapes.size()) +
                      " input(s): " + format_shapes(shapes));
  }
  for (const auto& s : shapes) {
    if (s.size() != 2) {
      throw ConfigError(who + ": its inputs must be sequences (steps, features), got " + format_shapes(shapes));
    }
  }
  const Shape& key = shapes.size() == 3 ? shapes[2] : shapes[1];
  if (key[0] != shapes[1][0]) {
    throw ConfigError(who + ": value and key must have the same steps, got value " + format_shape(shapes[1]) +
                      " and key " + format_shape(key));
  }
  return {shapes[0], shapes[1], key};
}

/// The same on tensors (N, steps, features) at forward time (another batch or length than built is fine).
inline void check_attention_tensors(const std::string& who, const at::Tensor& q, const at::Tensor& v,
                                    const at::Tensor& k) {
  if (q.dim() != 3 || v.dim() != 3 || k.dim() != 3) {
    throw ConfigError(who + ": query, value and key must be (N, steps, features), got " +
                      format_sizes(q.sizes().vec()) + ", " + format_sizes(v.sizes().vec()) + ", " +
                      format_sizes(k.sizes().vec()));
  }
  if (v.size(1) != k.size(1) || q.size(0) != v.size(0) || k.size(0) != v.size(0)) {
    throw ConfigError(who + ": value and key must have the same steps and every input the same batch, got query " +
                      format_sizes(q.sizes().vec()) + ", value " + format_sizes(v.sizes().vec()) + ", key " +
                      format_sizes(k.sizes().vec()));
  }
}

/// Keras's causal mask (_compute_causal_mask): (T, S), true where key step j <= query step i.
inline at::Tensor causal_mask(int64_t t, int64_t s, const at::TensorOptions& like) {
  const at::Tensor i = at::arange(t, like.dtype(at::kLong)).unsqueeze(1);
  const at::Tensor j = at::arange(s, like.dtype(at::kLong)).unsqueeze(0);
  return i.ge(j);
}

/// The causal mask as an additive float bias (0 where allowed, −1e9 elsewhere), for ONNX.
inline at::Tensor causal_bias(int64_t t, int64_t s) {
  const at::Tensor allowed = causal_mask(t, s, at::TensorOptions());
  return at::where(allowed, at::zeros({t, s}), at::full({t, s}, -1e9));
}

/// The boolean mask of one call (T, S) or (N, T, S): `given` (nonzero = may attend; (N, T, S) or (T, S))
/// and the causal mask when `causal`, combined with a logical and; undefined when neither. Errors:
/// ConfigError naming `who` for a given mask of another shape.
inline at::Tensor attention_mask(const std::string& who, const at::Tensor& given, bool causal, int64_t t, int64_t s,
                                 const at::Tensor& like) {
  at::Tensor mask;
  if (given.defined()) {
    const auto d = given.sizes().vec();
    const bool ok = (given.dim() == 3 && d[0] == like.size(0) && d[1] == t && d[2] == s) ||
                    (given.dim() == 2 && d[0] == t && d[1] == s);
    if (!ok) {
      throw ConfigError(who + ": attention_mask must be (N, T, S) or (T, S) = (" + std::to_string(like.size(0)) + ", " +
                        std::to_string(t) + ", " + std::to_string(s) + "), got " + format_sizes(d));
    }
    mask = given.to(like.device()).ne(0);
  }
  if (causal) {
    const at::Tensor c = causal_mask(t, s, like.options());
    mask = mask.defined() ? mask.logical_and(c) : c;
  }
  return mask;
}

/// Keras's _compute_attention_mask from the inputs' Keras masks (one per input of {query, value, key}, each
/// (N, steps) or undefined): query (N, T, 1) & value (N, 1, S) & key (N, 1, S), broadcast to (N, T, S), bool
/// (the causal mask is and-ed by attention_mask). Errors: ConfigError naming `who` for a mask of another shape.
inline at::Tensor inputs_attention_mask(const std::string& who, const std::vector<at::Tensor>& xs,
                                        const std::vector<at::Tensor>& masks) {
  const int64_t n = xs[0].size(0), t = xs[0].size(1), s = xs[1].size(1);
  at::Tensor allowed = at::ones({n, t, s}, xs[0].options().dtype(at::kBool));
  for (size_t i = 0; i < masks.size() && i < xs.size(); ++i) {
    if (!masks[i].defined()) continue;
    const at::Tensor m = masks[i].to(xs[0].device(), at::kBool);
    if (m.dim() != 2 || m.size(0) != n || m.size(1) != xs[i].size(1)) {
      throw ConfigError(who + ": the mask of input " + std::to_string(i) + " must be (N, steps) = " +
                        format_sizes({n, xs[i].size(1)}) + ", got " + format_sizes(m.sizes().vec()));
    }
    allowed = allowed.logical_and(i == 0 ? m.unsqueeze(2) : m.unsqueeze(1));
  }
  return allowed;
}

/// Keras 3's Softmax with a mask (MultiHeadAttention): masked scores replaced by −1e9, the softmax over
/// the last axis, masked probabilities set to 0 (a row masked entirely gives zeros).
inline at::Tensor masked_softmax(const at::Tensor& scores, const at::Tensor& mask) {
  const at::Tensor neg = at::full({}, -1e9, scores.options());
  const at::Tensor p = at::softmax(at::where(mask, scores, neg), -1);
  return at::where(mask, p, at::zeros({}, scores.options()));
}

/// One of the heads' EinsumDense projections, named `name`, with `bias_axes` when `use_bias`.
EinsumDense attention_projection(const std::string& equation, EinsumOutputShape shape, const std::string& bias_axes,
                                 bool use_bias, const std::string& name);

/// einsum(equation, x, dense's kernel) + its bias (the sublayer's forward on sequences (N, steps, d)).
at::Tensor attention_project(const EinsumDense& dense, const std::string& equation, const at::Tensor& x);

/// Keras's weights of the four projections (query, key, value, output), each kernel then bias when
/// `use_bias`: "query/kernel", "query/bias", …, "attention_output/bias" (MultiHeadAttention's and
/// GroupQueryAttention's layout alike).
std::vector<std::string> projection_weight_names(bool use_bias);
/// Sets the four projections from those weights (in that order) through each EinsumDense's own layout.
/// Errors: ConfigError prefixed with `who` for a wrong count or shape.
void set_projection_weights(const std::string& who, std::vector<EinsumDense> dense, bool use_bias,
                            const std::vector<at::Tensor>& weights, const KerasWeightOptions& o);
/// The four projections' Keras weights, in that order.
std::vector<at::Tensor> projection_weights(const std::vector<EinsumDense>& dense);

/// Scaled dot-product attention over heads: q (N, T, h, k) (already scaled), k (N, S, h, k), v (N, S, h, v)
/// → (N, T, h, v). `mask` (T, S) or (N, T, S), true = may attend (undefined: none) through masked_softmax;
/// dropout on the probabilities when `dropout` > 0 (the caller passes 0 outside training); `scores`, when
/// given, receives the probabilities (N, h, T, S) before the dropout (Keras's return_attention_scores).
at::Tensor attention_over_heads(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& mask,
                                double dropout, at::Tensor* scores);

/// ONNX of a projection to heads: (N, steps, d) · kernel (d, h, k) + bias as MatMul / Add, Reshape to
/// (N, steps, h, k), Transpose by `perm`. With `repeats` > 1 the kernel and the bias go in with each head
/// repeated `repeats` times in place (GroupQueryAttention's ops.repeat of the projection's output: the same
/// values), so the nodes give (N, steps, h·repeats, k). Node names from `l` and the sublayer.
std::string onnx_attention_heads(const Layer& l, io::OnnxGraph& g, const std::string& x, const EinsumDense& d,
                                 const std::vector<int64_t>& perm, int64_t repeats = 1);

/// ONNX of attention_over_heads and the output projection: q (N, h, T, k) (scaled), k (N, h, k, S), v
/// (N, h, S, v): MatMul, Add of `causal_bias` (T, S) when defined, Softmax, MatMul, Transpose, Reshape to
/// (N, T, h·v), MatMul by `output`'s kernel as (h·v, E) and Add of its bias.
std::string onnx_attention_output(const Layer& l, io::OnnxGraph& g, const std::string& q, const std::string& k,
                                  const std::string& v, const at::Tensor& causal_bias, const EinsumDense& output);

}  // namespace torchfit::detail
