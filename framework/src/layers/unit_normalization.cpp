#include <torchfit/layers/unit_normalization.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/normalized_axes.h"

namespace torchfit {
namespace {
constexpr double kMinSquareSum = 1e-12;  // Keras: ops.rsqrt(ops.maximum(square_sum, 1e-12))
}  // namespace

UnitNormalizationImpl::UnitNormalizationImpl(UnitNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.axis().axes.empty()) throw ConfigError(describe() + ": axis must name at least one axis");
}

Shape UnitNormalizationImpl::build_impl(const Shape& in) {
  const detail::NormalizedAxes axes = detail::normalized_axes(describe(), options.axis(), in);
  tensor_axes_ = axes.tensor;
  count_ = 1;
  for (int64_t s : axes.param_shape) count_ *= s;
  return in;
}

at::Tensor UnitNormalizationImpl::forward(const at::Tensor& input) {
  const bool low = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = low ? input.to(at::kFloat) : input;
  const at::Tensor square_sum = (x * x).sum(tensor_axes_, /*keepdim=*/true);
  const at::Tensor y = x * at::rsqrt(square_sum.clamp_min(kMinSquareSum));
  return low ? y.to(input.scalar_type()) : y;
}

// x / √max(Σ x², 1e-12): the sum as the per-axis means times the count (OpenCV reads ReduceMean's axes
// attribute in every opset 13–17; ReduceSum takes them as an input from 13 on); max(s, m) as
// relu(s − m) + m (OpenCV 4.6 reads no Max or Clip with a constant; one rounding, |error| ≤ ulp(s)).
std::string UnitNormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const std::string squared = g.add_node("Mul", {in[0], in[0]}, {}, onnx_name(*this, "squared"));
  const std::string mean = detail::onnx_mean_over(*this, g, squared, tensor_axes_, "mean_square");
  const std::string sum = g.add_node("Mul", {mean, g.add_scalar(onnx_name(*this, "count"), static_cast<float>(count_))},
                                     {}, onnx_name(*this, "square_sum"));
  const std::string above =
      g.add_node("Add", {sum, g.add_scalar(onnx_name(*this, "minus_min"), static_cast<float>(-kMinSquareSum))}, {},
                 onnx_name(*this, "above_min"));
  const std::string floor = g.add_node("Add",
                                       {g.add_node("Relu", {above}, {}, onnx_name(*this, "above_relu")),
                                        g.add_scalar(onnx_name(*this, "min"), static_cast<float>(kMinSquareSum))},
                                       {}, onnx_name(*this, "at_least_min"));
  const std::string norm = g.add_node("Sqrt", {floor}, {}, onnx_name(*this, "norm"));
  return g.add_node("Div", {in[0], norm}, {}, onnx_name(*this, "normalized"));
}

TORCHFIT_REGISTER_LAYER(UnitNormalization);

}  // namespace torchfit
