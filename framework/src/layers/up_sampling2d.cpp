#include <torchfit/layers/up_sampling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

UpSampling2DImpl::UpSampling2DImpl(UpSampling2DOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const auto s = *options.size();
  if (s[0] <= 0 || s[1] <= 0) {
    throw ConfigError(describe() + ": size must be > 0, got (" + std::to_string(s[0]) + ", " + std::to_string(s[1]) +
                      ")");
  }
  if (options.interpolation() != "nearest" && options.interpolation() != "bilinear") {
    throw ConfigError(describe() + ": interpolation must be 'nearest' or 'bilinear', got '" + options.interpolation() +
                      "'");
  }
}

Shape UpSampling2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  const auto s = *options.size();
  return {in[0] * s[0], in[1] * s[1], in[2]};
}

at::Tensor UpSampling2DImpl::forward(const at::Tensor& x) {
  const auto s = *options.size();
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (options.interpolation() == "bilinear") {
    // align_corners=false with the scales given: source = (i + 0.5) / s − 0.5, clamped at 0 — TensorFlow's
    // half-pixel centres exactly (LibTorch computes the same from the output size otherwise, but passing
    // the integer scales keeps the coordinate exact).
    return at::upsample_bilinear2d(x, {h * s[0], w * s[1]}, /*align_corners=*/false, static_cast<double>(s[0]),
                                   static_cast<double>(s[1]));
  }
  // Exact repeats (no floating-point source index): (N, C, H, 1, W, 1) expanded to (N, C, H, s_h, W, s_w).
  return x.reshape({n, c, h, 1, w, 1}).expand({n, c, h, s[0], w, s[1]}).reshape({n, c, h * s[0], w * s[1]});
}

std::string UpSampling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const auto s = *options.size();
  const std::string scales =
      g.add_initializer(detail::onnx_name(*this, "scales"),
                        at::tensor(std::vector<float>{1.0f, 1.0f, static_cast<float>(s[0]), static_cast<float>(s[1])}));
  std::vector<io::OnnxAttribute> attributes;
  if (options.interpolation() == "bilinear") {
    // TensorFlow's half-pixel centres, source clamped at the edges (as forward()).
    attributes = {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}};
  } else {
    // Each pixel repeated: source = floor(i / s).
    attributes = {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}};
  }
  return g.add_node("Resize", {in[0], "", scales}, attributes, detail::onnx_name(*this, "Resize"));
}

TORCHFIT_REGISTER_LAYER(UpSampling2D);

}  // namespace torchfit
