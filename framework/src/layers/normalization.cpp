#include <torchfit/layers/normalization.h>

#include <algorithm>
#include <functional>
#include <sstream>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/normalized_axes.h"

namespace torchfit {

namespace {

constexpr double kEpsilon = 1e-7;  // Keras's backend.epsilon()

// The given `value` (a number or nested lists) broadcast to `shape` (Keras's ops.broadcast_to).
at::Tensor given_values(const std::string& who, const char* what, const nlohmann::json& value,
                        const std::vector<int64_t>& shape) {
  std::vector<double> flat;
  std::vector<int64_t> dims;
  std::function<void(const nlohmann::json&, size_t)> walk = [&](const nlohmann::json& v, size_t depth) {
    if (v.is_number()) {
      flat.push_back(v.get<double>());
      return;
    }
    if (!v.is_array()) throw ConfigError(who + ": " + what + " must be a number or a list of numbers, got " + v.dump());
    if (dims.size() <= depth) dims.push_back(static_cast<int64_t>(v.size()));
    for (const auto& e : v) walk(e, depth + 1);
  };
  walk(value, 0);
  at::Tensor t = at::tensor(flat, at::kDouble).to(at::kFloat);
  try {
    return (dims.empty() ? t.reshape({}) : t.reshape(dims)).broadcast_to(shape).contiguous();
  } catch (const c10::Error&) {
    std::ostringstream text;
    text << who << ": " << what << " " << value.dump() << " does not broadcast to the kept axes' shape "
         << at::IntArrayRef(shape);
    throw ConfigError(text.str());
  }
}

}  // namespace

NormalizationImpl::NormalizationImpl(NormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.mean().is_null() != options.variance().is_null()) {
    throw ConfigError(describe() + ": mean and variance must be given together, got mean " + options.mean().dump() +
                      " and variance " + options.variance().dump());
  }
}

Shape NormalizationImpl::build_impl(const Shape& in) {
  std::vector<int64_t> kept_tensor;
  if (options.axis().axes.empty()) {  // Keras's axis None: one mean and variance
    param_shape_ = {};
    param_view_ = std::vector<int64_t>(in.size() + 1, 1);
  } else {
    const detail::NormalizedAxes axes = detail::normalized_axes(describe(), options.axis(), in);
    param_shape_ = axes.param_shape;
    param_view_ = axes.param_view;
    kept_tensor = axes.tensor;
  }
  reduce_tensor_axes_.clear();
  for (int64_t d = 0; d <= static_cast<int64_t>(in.size()); ++d) {
    if (std::find(kept_tensor.begin(), kept_tensor.end(), d) == kept_tensor.end()) reduce_tensor_axes_.push_back(d);
  }
  if (!options.mean().is_null()) {
    given_mean_ = given_values(describe(), "mean", options.mean(), param_shape_);
    given_variance_ = given_values(describe(), "variance", options.variance(), param_shape_);
    return in;
  }
  mean = register_parameter("mean", at::zeros(param_shape_), /*requires_grad=*/false);
  variance = register_parameter("variance", at::ones(param_shape_), /*requires_grad=*/false);
  count = register_parameter("count", at::zeros({}), /*requires_grad=*/false);
  return in;
}

std::pair<at::Tensor, at::Tensor> NormalizationImpl::mean_and_scale() const {
  const at::Tensor& m = mean.defined() ? mean : given_mean_;
  const at::Tensor& v = mean.defined() ? variance : given_variance_;
  return {detail::weight_against_tensor(m, param_view_),
          detail::weight_against_tensor(v.sqrt().clamp_min(kEpsilon), param_view_)};
}

at::Tensor NormalizationImpl::forward(const at::Tensor& x) {
  const auto [m, scale] = mean_and_scale();
  if (options.invert()) return m + x * scale;
  return (x - m) / scale;
}

void NormalizationImpl::adapt(const at::Tensor& data) {
  if (!mean.defined()) {
    throw ConfigError(describe() + (built() ? ": adapt() needs a layer without a given mean and variance"
                                            : ": adapt() needs a built layer (give it an input shape)"));
  }
  if (data.dim() != static_cast<int64_t>(param_view_.size()) ||
      data.sizes().slice(1) != at::IntArrayRef(to_tensor_shape(input_shape()))) {
    std::ostringstream text;
    text << describe() << ": adapt() data of shape " << data.sizes() << " is not a batch of the built input "
         << format_shape(input_shape());
    throw ConfigError(text.str());
  }
  at::NoGradGuard no_grad;
  const at::Tensor d = data.to(at::kDouble);
  at::Tensor m = d.mean(reduce_tensor_axes_, /*keepdim=*/true);
  at::Tensor v = (d - m).square().mean(reduce_tensor_axes_, /*keepdim=*/true);
  if (m.dim() == 4) {  // back to Keras's order before dropping the reduced axes
    m = m.permute({0, 2, 3, 1});
    v = v.permute({0, 2, 3, 1});
  }
  mean.copy_(m.reshape(param_shape_));
  variance.copy_(v.reshape(param_shape_));
}

void NormalizationImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  if (!mean.defined()) {
    detail::expect_keras_weight_count(describe(), weights, 0);
    return;
  }
  detail::expect_keras_weight_count(describe(), weights, 3);
  detail::assign_keras_weight(describe(), mean, weights[0], "mean");
  detail::assign_keras_weight(describe(), variance, weights[1], "variance");
  detail::assign_keras_weight(describe(), count, weights[2].to(at::kFloat).reshape({}), "count");
}

std::vector<at::Tensor> NormalizationImpl::keras_weights_impl() const {
  if (!mean.defined()) return {};
  return {detail::keras_weight_copy(mean), detail::keras_weight_copy(variance), detail::keras_weight_copy(count)};
}

std::string NormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const auto [m, s] = mean_and_scale();
  const at::Tensor scale = (options.invert() ? s : 1.0 / s).contiguous();
  const at::Tensor shift = (options.invert() ? m : -m / s).contiguous();
  const std::string y =
      g.add_node("Mul", {in[0], g.add_initializer(onnx_name(*this, "scale"), scale)}, {}, onnx_name(*this, "Mul"));
  return g.add_node("Add", {y, g.add_initializer(onnx_name(*this, "shift"), shift)}, {}, onnx_name(*this, "Add"));
}

TORCHFIT_REGISTER_LAYER(Normalization);

}  // namespace torchfit
