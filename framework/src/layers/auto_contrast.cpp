#include <torchfit/layers/auto_contrast.h>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/image_augmentation.h>
#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

AutoContrastImpl::AutoContrastImpl(AutoContrastOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

Shape AutoContrastImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  return in;
}

at::Tensor AutoContrastImpl::forward(const at::Tensor& x) {
  const at::Tensor v = transform_value_range(x, value_range_, {0.0, 255.0});
  const at::Tensor low = v.amin({2, 3}, true), high = v.amax({2, 3}, true);
  const at::Tensor scale = 255.0 / (high - low);
  const at::Tensor stretched = (v * scale + (-low * scale)).clamp(0.0, 255.0);
  const at::Tensor result = transform_value_range(stretched, {0.0, 255.0}, value_range_);
  return at::where(at::isnan(result), x, result);  // Keras: "don't process NaN channels"
}

std::string AutoContrastImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const auto scalar = [&](const char* hint, double value) { return g.add_scalar(onnx_name(*this, hint), value); };
  const auto node = [&](const char* op, const std::vector<std::string>& inputs, const char* hint) {
    return g.add_node(op, inputs, {}, onnx_name(*this, hint));
  };
  // to_range: x·a + b, the affine map from one value range to another (x itself when the ranges are equal).
  const auto to_range = [&](const std::string& x, std::pair<double, double> from, std::pair<double, double> to,
                            const char* hint) {
    if (from == to) return x;
    const double a = (to.second - to.first) / (from.second - from.first), b = to.first - from.first * a;
    return node("Add", {node("Mul", {x, scalar(hint, a)}, hint), scalar(hint, b)}, hint);
  };
  const std::string v = to_range(in[0], value_range_, {0.0, 255.0}, "to_255");
  const std::string high = node("GlobalMaxPool", {v}, "high");
  const std::string low = node("Neg", {node("GlobalMaxPool", {node("Neg", {v}, "negated")}, "negated_low")}, "low");
  const std::string scale = node("Div", {scalar("255", 255.0), node("Sub", {high, low}, "span")}, "scale");
  const std::string offset = node("Neg", {node("Mul", {low, scale}, "low_scaled")}, "offset");
  const std::string stretched = node("Add", {node("Mul", {v, scale}, "scaled"), offset}, "stretched");
  // Max(Min(·, 255), 0) rather than Clip, whose bounds must be 0-D (add_scalar's constants are (1)).
  const std::string clipped =
      node("Max", {node("Min", {stretched, scalar("clip_high", 255.0)}, "clipped_high"), scalar("clip_low", 0.0)},
           "clipped");
  const std::string result = to_range(clipped, {0.0, 255.0}, value_range_, "from_255");
  return node("Where", {node("IsNaN", {result}, "is_nan"), in[0], result}, "AutoContrast");
}

TORCHFIT_REGISTER_LAYER(AutoContrast);

}  // namespace torchfit
