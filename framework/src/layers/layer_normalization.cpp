#include <torchfit/layers/layer_normalization.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/normalized_axes.h"

namespace torchfit {

LayerNormalizationImpl::LayerNormalizationImpl(LayerNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  detail::check_epsilon(describe(), options.epsilon());
  if (options.axis().axes.empty()) throw ConfigError(describe() + ": axis must name at least one axis");
}

Shape LayerNormalizationImpl::build_impl(const Shape& in) {
  const detail::NormalizedAxes axes = detail::normalized_axes(describe(), options.axis(), in);
  tensor_axes_ = axes.tensor;
  param_view_ = axes.param_view;
  if (options.scale()) gamma = register_parameter("gamma", at::ones(axes.param_shape));
  if (options.center()) beta = register_parameter("beta", at::zeros(axes.param_shape));
  return in;
}

at::Tensor LayerNormalizationImpl::forward(const at::Tensor& input) {
  const bool low = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = low ? input.to(at::kFloat) : input;
  const at::Tensor mean = x.mean(tensor_axes_, /*keepdim=*/true);
  const at::Tensor centred = x - mean;
  const at::Tensor var = (centred * centred).mean(tensor_axes_, /*keepdim=*/true);
  at::Tensor y = centred * at::rsqrt(var + options.epsilon());
  if (gamma.defined()) y = y * detail::weight_against_tensor(gamma, param_view_);
  if (beta.defined()) y = y + detail::weight_against_tensor(beta, param_view_);
  return low ? y.to(input.scalar_type()) : y;
}

// Keras: gamma (when scale), beta (when center), shaped as the normalized axes, as torchfit holds them.
void LayerNormalizationImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::set_gamma_and_beta(describe(), gamma, beta, weights);
}

std::vector<at::Tensor> LayerNormalizationImpl::keras_weights_impl() const {
  return detail::gamma_and_beta_to_keras(gamma, beta);
}

namespace {

// As forward() computes it: (x − mean) / √(var + ε) · γ + β.
std::string layer_norm_onnx_decomposed(const LayerNormalizationImpl& l, io::OnnxGraph& g, const std::string& x,
                                       const std::vector<int64_t>& axes) {
  using detail::onnx_name;
  const std::string mean = detail::onnx_mean_over(l, g, x, axes, "mean");
  const std::string centred = g.add_node("Sub", {x, mean}, {}, onnx_name(l, "centred"));
  const std::string squared = g.add_node("Mul", {centred, centred}, {}, onnx_name(l, "squared"));
  const std::string var = detail::onnx_mean_over(l, g, squared, axes, "variance");
  const std::string eps =
      g.add_node("Add", {var, g.add_scalar(onnx_name(l, "epsilon"), l.options.epsilon())}, {}, onnx_name(l, "var_eps"));
  const std::string std_dev = g.add_node("Sqrt", {eps}, {}, onnx_name(l, "std"));
  std::string y = g.add_node("Div", {centred, std_dev}, {}, onnx_name(l, "normalized"));
  if (l.gamma.defined()) {
    y = g.add_node(
        "Mul",
        {y, g.add_initializer(onnx_name(l, "gamma"), detail::weight_against_tensor(l.gamma, l.param_view(), true))}, {},
        onnx_name(l, "scaled"));
  }
  if (l.beta.defined()) {
    y = g.add_node(
        "Add",
        {y, g.add_initializer(onnx_name(l, "beta"), detail::weight_against_tensor(l.beta, l.param_view(), true))}, {},
        onnx_name(l, "shifted"));
  }
  return y;
}

}  // namespace

std::string LayerNormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::vector<int64_t> axes;
  for (int64_t a : options.axis().axes) axes.push_back(keras_to_tensor_axis(input_shape(), a));
  std::sort(axes.begin(), axes.end());
  const auto rank = static_cast<int64_t>(input_shape().size()) + 1;
  const bool suffix = axes.back() == rank - 1 && axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (g.opset() < 17 || !suffix || !gamma.defined()) return layer_norm_onnx_decomposed(*this, g, in[0], axes);
  // One LayerNormalization node over axes [a, rank): scale/bias shaped as those axes.
  auto normalized = [&](const at::Tensor& p) {
    const at::Tensor v = detail::weight_against_tensor(p, param_view_, true);
    return v.reshape(v.sizes().slice(static_cast<size_t>(axes.front())));
  };
  std::vector<std::string> ins{in[0], g.add_initializer(onnx_name(*this, "gamma"), normalized(gamma))};
  if (beta.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "beta"), normalized(beta)));
  return g.add_node("LayerNormalization", ins, {{"axis", axes.front()}, {"epsilon", options.epsilon()}},
                    onnx_name(*this, "LayerNormalization"));
}

TORCHFIT_REGISTER_LAYER(LayerNormalization);

}  // namespace torchfit
