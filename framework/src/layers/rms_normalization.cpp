#include <torchfit/layers/rms_normalization.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/normalized_axes.h"

namespace torchfit {

RMSNormalizationImpl::RMSNormalizationImpl(RMSNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  detail::check_epsilon(describe(), options.epsilon());
  if (options.axis().axes.empty()) throw ConfigError(describe() + ": axis must name at least one axis");
}

Shape RMSNormalizationImpl::build_impl(const Shape& in) {
  const detail::NormalizedAxes axes = detail::normalized_axes(describe(), options.axis(), in);
  const auto rank = static_cast<int64_t>(in.size()) + 1;
  for (size_t i = 0; i < axes.keras.size(); ++i) {
    const int64_t given = options.axis().axes[i] < 0 ? options.axis().axes[i] + rank : options.axis().axes[i];
    if (axes.keras[i] != rank - static_cast<int64_t>(axes.keras.size() - i) || given != axes.keras[i]) {
      throw ConfigError(describe() + ": axis " + nlohmann::json(options.axis()).dump() + " on the input " +
                        format_shape(in) +
                        " must be the last axes in increasing order (the scale broadcasts over them)");
    }
  }
  tensor_axes_ = axes.tensor;
  param_view_ = axes.param_view;
  scale = register_parameter("scale", at::ones(axes.param_shape));
  return in;
}

at::Tensor RMSNormalizationImpl::forward(const at::Tensor& input) {
  const bool low = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = low ? input.to(at::kFloat) : input;
  const at::Tensor mean_square = (x * x).mean(tensor_axes_, /*keepdim=*/true);
  const at::Tensor y =
      x * at::rsqrt(mean_square + options.epsilon()) * detail::weight_against_tensor(scale, param_view_);
  return low ? y.to(input.scalar_type()) : y;
}

void RMSNormalizationImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, 1);
  detail::assign_keras_weight(describe(), scale, weights[0], "scale");
}

std::vector<at::Tensor> RMSNormalizationImpl::keras_weights_impl() const { return {detail::keras_weight_copy(scale)}; }

std::string RMSNormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::vector<int64_t> axes = tensor_axes_;
  std::sort(axes.begin(), axes.end());
  const std::string squared = g.add_node("Mul", {in[0], in[0]}, {}, onnx_name(*this, "squared"));
  const std::string mean = detail::onnx_mean_over(*this, g, squared, axes, "mean_square");
  const std::string eps = g.add_node("Add", {mean, g.add_scalar(onnx_name(*this, "epsilon"), options.epsilon())}, {},
                                     onnx_name(*this, "eps"));
  const std::string rms = g.add_node("Sqrt", {eps}, {}, onnx_name(*this, "rms"));
  const std::string y = g.add_node("Div", {in[0], rms}, {}, onnx_name(*this, "normalized"));
  const std::string s =
      g.add_initializer(onnx_name(*this, "scale"), detail::weight_against_tensor(scale, param_view_, true));
  return g.add_node("Mul", {y, s}, {}, onnx_name(*this, "scaled"));
}

TORCHFIT_REGISTER_LAYER(RMSNormalization);

}  // namespace torchfit
