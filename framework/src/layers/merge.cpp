#include <torchfit/layers/merge.h>

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

}  // namespace torchfit
