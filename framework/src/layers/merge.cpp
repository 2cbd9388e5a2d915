#include <torchfit/layers/merge.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

MergeImpl::MergeImpl(const char* class_name, const std::string& name, size_t min_inputs, size_t max_inputs)
    : Layer(class_name, name), min_inputs_(min_inputs), max_inputs_(max_inputs) {}

void MergeImpl::check_count(size_t n, const std::string& shapes) const {
  if (n < min_inputs_ || (max_inputs_ && n > max_inputs_)) {
    const std::string want = max_inputs_ == min_inputs_ ? "exactly " + std::to_string(min_inputs_)
                                                        : "at least " + std::to_string(min_inputs_);
    throw ConfigError(describe() + " takes a list of " + want + " inputs, got " + std::to_string(n) +
                      (shapes.empty() ? "" : ": " + shapes));
  }
}

Shape MergeImpl::build_impl(const Shape& input_shape) {
  throw ConfigError(describe() + " takes a list of inputs, got one: " + format_shape(input_shape));
}

Shape MergeImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  check_count(shapes.size(), format_shapes(shapes));
  Shape out = shapes[0];
  for (const auto& s : shapes) {
    bool ok = s.size() == out.size();
    for (size_t d = 0; ok && d < s.size(); ++d) {
      if (s[d] == out[d] || s[d] == 1) continue;
      if (out[d] == 1) {
        out[d] = s[d];
      } else {
        ok = false;
      }
    }
    if (!ok) {
      throw ConfigError(describe() + ": inputs with shapes " + format_shapes(shapes) +
                        " cannot be merged (same rank, each dimension equal or 1)");
    }
  }
  return out;
}

at::Tensor MergeImpl::forward(const at::Tensor&) {
  throw ConfigError(describe() + " takes a list of tensors (forward_multi), got one tensor");
}

at::Tensor MergeImpl::forward_multi(const std::vector<at::Tensor>& xs) {
  check_count(xs.size(), "");
  return merge(xs);
}

at::Tensor AddImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor y = xs[0] + xs[1];
  for (size_t i = 2; i < xs.size(); ++i) y = y + xs[i];
  return y;
}

at::Tensor SubtractImpl::merge(const std::vector<at::Tensor>& xs) { return xs[0] - xs[1]; }

at::Tensor MultiplyImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor y = xs[0] * xs[1];
  for (size_t i = 2; i < xs.size(); ++i) y = y * xs[i];
  return y;
}

at::Tensor AverageImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor y = xs[0] + xs[1];
  for (size_t i = 2; i < xs.size(); ++i) y = y + xs[i];
  return y / static_cast<double>(xs.size());
}

at::Tensor MaximumImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor y = at::maximum(xs[0], xs[1]);
  for (size_t i = 2; i < xs.size(); ++i) y = at::maximum(y, xs[i]);
  return y;
}

at::Tensor MinimumImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor y = at::minimum(xs[0], xs[1]);
  for (size_t i = 2; i < xs.size(); ++i) y = at::minimum(y, xs[i]);
  return y;
}

ConcatenateImpl::ConcatenateImpl(ConcatenateOptions opts)
    : MergeImpl(keras_class_name, opts.name(), 2, 0), options(std::move(opts)) {
  if (options.axis() == 0) throw ConfigError(describe() + ": axis 0 is the batch axis and cannot be concatenated");
}

Shape ConcatenateImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  check_count(shapes.size(), format_shapes(shapes));
  const auto rank = static_cast<int64_t>(shapes[0].size());
  // Keras axis over (batch, d1, …, dr): -1 → r; the per-sample Keras index is axis - 1.
  const int64_t axis = options.axis() < 0 ? options.axis() + rank + 1 : options.axis();
  if (axis < 1 || axis > rank) {
    throw ConfigError(describe() + ": axis " + std::to_string(options.axis()) + " is out of range for inputs " +
                      format_shapes(shapes) + " (batch axis excluded: 1.." + std::to_string(rank) + " or -1.." +
                      std::to_string(-rank) + ")");
  }
  const auto k = static_cast<size_t>(axis - 1);
  Shape out = shapes[0];
  out[k] = 0;
  for (const auto& s : shapes) {
    bool ok = static_cast<int64_t>(s.size()) == rank;
    for (size_t d = 0; ok && d < s.size(); ++d) ok = d == k || s[d] == shapes[0][d];
    if (!ok) {
      throw ConfigError(describe() + ": inputs with shapes " + format_shapes(shapes) +
                        " cannot be concatenated on axis " + std::to_string(options.axis()) +
                        " (every other dimension must be equal)");
    }
    out[k] += s[k];
  }
  tensor_dim_ = keras_to_tensor_axis(shapes[0], axis);  // Keras (H, W, C) ↔ tensor (C, H, W)
  return out;
}

at::Tensor ConcatenateImpl::merge(const std::vector<at::Tensor>& xs) { return at::cat(xs, tensor_dim_); }

namespace {

// A sequence's mask (N, steps) broadcast over its features (N, steps, C); ConfigError for another rank.
at::Tensor mask_over_features(const Layer& layer, const at::Tensor& mask, const at::Tensor& x) {
  if (x.dim() != 3 || mask.dim() != 2) {
    throw ConfigError("layer '" + layer.name() + "' (" + layer.class_name() +
                      "): Keras masks are supported on sequences (N, steps, features), got an input " +
                      format_sizes(x.sizes().vec()) + " with a mask " + format_sizes(mask.sizes().vec()));
  }
  return mask.to(x.device(), at::kBool).unsqueeze(2).expand_as(x);
}

}  // namespace

at::Tensor MergeImpl::compute_mask(const std::vector<at::Tensor>&, const std::vector<at::Tensor>& masks) const {
  at::Tensor out;
  for (const auto& m : masks) {
    if (!m.defined()) return {};
    out = out.defined() ? out.logical_or(m.to(out.device(), at::kBool)) : m.to(at::kBool);
  }
  return out;
}

// keras/src/layers/merging/base_merge.py _apply_merge_op_and_or_mask (Maximum, Minimum).
at::Tensor MergeImpl::forward_masked(const std::vector<at::Tensor>& xs, const std::vector<at::Tensor>& masks) {
  if (!merges_masked_steps() || masks.size() != xs.size()) return forward_multi(xs);
  check_count(xs.size(), "");
  at::Tensor out = xs[0];
  at::Tensor out_mask = masks[0].defined() ? mask_over_features(*this, masks[0], xs[0]) : at::Tensor();
  for (size_t i = 1; i < xs.size(); ++i) {
    at::Tensor x = xs[i];
    const at::Tensor m = masks[i].defined() ? mask_over_features(*this, masks[i], x) : at::Tensor();
    if (m.defined()) x = at::where(m, x, out);
    if (out_mask.defined()) out = at::where(out_mask, out, x);
    out_mask = m.defined() && out_mask.defined() ? out_mask.logical_or(m) : at::Tensor();
    out = merge({out, x});
  }
  return out;
}

at::Tensor ConcatenateImpl::compute_mask(const std::vector<at::Tensor>& xs,
                                         const std::vector<at::Tensor>& masks) const {
  if (std::none_of(masks.begin(), masks.end(), [](const at::Tensor& m) { return m.defined(); })) return {};
  std::vector<at::Tensor> full;
  for (size_t i = 0; i < xs.size(); ++i) {
    full.push_back(masks[i].defined() ? mask_over_features(*this, masks[i], xs[i])
                                      : at::ones(xs[i].sizes(), xs[i].options().dtype(at::kBool)));
  }
  return at::cat(full, tensor_dim_).any(-1);
}

TORCHFIT_REGISTER_LAYER(Add);
TORCHFIT_REGISTER_LAYER(Subtract);
TORCHFIT_REGISTER_LAYER(Multiply);
TORCHFIT_REGISTER_LAYER(Average);
TORCHFIT_REGISTER_LAYER(Maximum);
TORCHFIT_REGISTER_LAYER(Minimum);

// ONNX: Add, Multiply, Maximum, Minimum as the binary operator applied left to right, as merge().
std::string MergeImpl::onnx_chain(io::OnnxGraph& g, const std::vector<std::string>& in, const std::string& op) const {
  std::string y = g.add_node(op, {in[0], in[1]}, {}, detail::onnx_name(*this, op));
  for (size_t i = 2; i < in.size(); ++i) y = g.add_node(op, {y, in[i]}, {}, detail::onnx_name(*this, op));
  return y;
}

std::string AddImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_chain(g, in, "Add");
}

std::string SubtractImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_node("Sub", {in[0], in[1]}, {}, detail::onnx_name(*this, "Sub"));
}

std::string MultiplyImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_chain(g, in, "Mul");
}

std::string AverageImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const std::string sum = onnx_chain(g, in, "Add");
  return g.add_node("Div", {sum, g.add_scalar(detail::onnx_name(*this, "count"), static_cast<float>(in.size()))}, {},
                    detail::onnx_name(*this, "Div"));
}

std::string MaximumImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_chain(g, in, "Max");
}

std::string MinimumImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_chain(g, in, "Min");
}

std::string ConcatenateImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const int64_t axis = keras_to_tensor_axis(input_shapes()[0], options.axis());  // as merge()
  return g.add_node("Concat", in, {{"axis", axis}}, detail::onnx_name(*this, "Concat"));
}

TORCHFIT_REGISTER_LAYER(Concatenate);

// --- Dot

namespace {
constexpr double kDotNormEpsilon = 1e-7;  // Keras 3's backend.epsilon(), ops.normalize's floor on the norm
}

DotImpl::DotImpl(DotOptions opts) : MergeImpl(keras_class_name, opts.name(), 2, 2), options(std::move(opts)) {
  const KerasAxes& a = options.axes();
  if (a.is_list ? a.axes.size() != 2 : a.axes.size() != 1) {
    throw ConfigError(describe() + ": axes must be an integer or a list of two integers, got " +
                      nlohmann::json(a).dump());
  }
}

Shape DotImpl::build_multi_impl(const std::vector<Shape>& shapes) {
  check_count(shapes.size(), format_shapes(shapes));
  Shape out;
  axes_.clear();
  for (size_t i = 0; i < 2; ++i) {
    if (shapes[i].empty() || shapes[i].size() > 2) {
      throw ConfigError(describe() + ": inputs with shapes " + format_shapes(shapes) +
                        " are not supported (vectors (D) or sequences (steps, D) per sample)");
    }
    const KerasAxes& a = options.axes();
    const int64_t axis = a.axes[a.is_list ? i : 0];
    axes_.push_back(resolve_keras_axes(KerasAxes(axis), shapes[i], describe())[0]);
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      if (static_cast<int64_t>(d) + 1 != axes_[i]) out.push_back(shapes[i][d]);
    }
  }
  const int64_t k0 = shapes[0][axes_[0] - 1], k1 = shapes[1][axes_[1] - 1];
  if (k0 != k1) {
    throw ConfigError(describe() + ": the dot axes of inputs " + format_shapes(shapes) + " differ in size (" +
                      std::to_string(k0) + " at axis " + std::to_string(axes_[0]) + ", " + std::to_string(k1) +
                      " at axis " + std::to_string(axes_[1]) + ")");
  }
  if (out.empty()) out.push_back(1);  // Keras: an output of rank 1 with the batch becomes (N, 1)
  return out;
}

at::Tensor DotImpl::merge(const std::vector<at::Tensor>& xs) {
  at::Tensor x = xs[0], y = xs[1];
  if (options.normalize()) {
    x = x * (x * x).sum(axes_[0], true).rsqrt().clamp_max(1.0 / kDotNormEpsilon);
    y = y * (y * y).sum(axes_[1], true).rsqrt().clamp_max(1.0 / kDotNormEpsilon);
  }
  // (N, P, K) · (N, K, Q), as Keras's batch_dot: the first input's dot axis last, the second's first.
  x = x.dim() == 2 ? x.unsqueeze(1) : (axes_[0] == 1 ? x.transpose(1, 2) : x);
  y = y.dim() == 2 ? y.unsqueeze(2) : (axes_[1] == 2 ? y.transpose(1, 2) : y);
  std::vector<int64_t> out{xs[0].size(0)};  // the first input's other axes, then the second's
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t d = 1; d < xs[i].dim(); ++d) {
      if (d != axes_[i]) out.push_back(xs[i].size(d));
    }
  }
  if (out.size() == 1) out.push_back(1);
  return at::matmul(x, y).reshape(out);
}

std::string DotImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::vector<std::string> v = in;
  for (size_t i = 0; i < 2; ++i) {
    const std::string hint = onnx_name(*this, i == 0 ? "x" : "y");
    const int64_t axis = axes_[i];
    if (options
            .normalize()) {  // x / max(sqrt(Σx²), ε), the max as relu(n − ε) + ε (OpenCV 4.6 has no Max by a constant)
      const int64_t size = input_shapes()[i][axis - 1];
      const std::string sq = g.add_node("Mul", {v[i], v[i]}, {}, hint + "_squared");
      const std::string mean =
          g.add_node("ReduceMean", {sq}, {{"axes", std::vector<int64_t>{axis}}, {"keepdims", 1}}, hint + "_mean");
      const std::string sum =
          g.add_node("Mul", {mean, g.add_scalar(hint + "_size", static_cast<float>(size))}, {}, hint + "_square_sum");
      const std::string norm = g.add_node("Sqrt", {sum}, {}, hint + "_norm");
      const std::string above =
          g.add_node("Relu",
                     {g.add_node("Add", {norm, g.add_scalar(hint + "_minus_eps", static_cast<float>(-kDotNormEpsilon))},
                                 {}, hint + "_above_eps")},
                     {}, hint + "_above_relu");
      const std::string floored = g.add_node(
          "Add", {above, g.add_scalar(hint + "_eps", static_cast<float>(kDotNormEpsilon))}, {}, hint + "_floored");
      v[i] = g.add_node("Div", {v[i], floored}, {}, hint + "_normalized");
    }
    const bool vector = input_shapes()[i].size() == 1;
    if (vector) {
      v[i] = g.add_node("Reshape",
                        {v[i], g.add_int64s(hint + "_shape",
                                            i == 0 ? std::vector<int64_t>{0, 1, -1} : std::vector<int64_t>{0, -1, 1})},
                        {}, hint + "_Reshape");
    } else if (axis == (i == 0 ? 1 : 2)) {
      v[i] = g.add_node("Transpose", {v[i]}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, hint + "_Transpose");
    }
  }
  const std::string product = g.add_node("MatMul", {v[0], v[1]}, {}, onnx_name(*this, "MatMul"));
  std::vector<int64_t> shape = output_shape();
  shape.insert(shape.begin(), 0);
  return g.add_node("Reshape", {product, g.add_int64s(onnx_name(*this, "shape"), shape)}, {},
                    onnx_name(*this, "Reshape"));
}

TORCHFIT_REGISTER_LAYER(Dot);

}  // namespace torchfit
