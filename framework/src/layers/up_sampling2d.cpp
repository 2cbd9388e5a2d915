#include <torchfit/layers/up_sampling2d.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

UpSampling2DImpl::UpSampling2DImpl(UpSampling2DOptions opts)
    : UpSamplingLayer(keras_class_name, opts.name(), at::IntArrayRef(*opts.size()).vec()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.interpolation() != "nearest" && options.interpolation() != "bilinear") {
    throw ConfigError(describe() + ": interpolation must be 'nearest' or 'bilinear', got '" + options.interpolation() +
                      "'");
  }
}

at::Tensor UpSampling2DImpl::forward(const at::Tensor& x) {
  if (options.interpolation() != "bilinear") return UpSamplingLayer::forward(x);
  const auto s = *options.size();
  // align_corners=false with the scales given: source = (i + 0.5) / s − 0.5, clamped at 0 — TensorFlow's
  // half-pixel centres exactly (LibTorch computes the same from the output size otherwise, but passing
  // the integer scales keeps the coordinate exact).
  return at::upsample_bilinear2d(x, {x.size(2) * s[0], x.size(3) * s[1]}, /*align_corners=*/false,
                                 static_cast<double>(s[0]), static_cast<double>(s[1]));
}

std::string UpSampling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  if (options.interpolation() != "bilinear") return UpSamplingLayer::export_onnx(g, in);
  // TensorFlow's half-pixel centres, source clamped at the edges (as forward()).
  const auto s = *options.size();
  return resize_node(g, in[0], {1.0f, 1.0f, static_cast<float>(s[0]), static_cast<float>(s[1])},
                     {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}}, "Resize");
}

TORCHFIT_REGISTER_LAYER(UpSampling2D);

}  // namespace torchfit
