#include <torchfit/layers/cropping2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

Cropping2DImpl::Cropping2DImpl(Cropping2DOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  options.cropping().check_non_negative(describe(), "cropping");
}

Shape Cropping2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  const Edges2D& c = options.cropping();
  const Shape out{in[0] - c.top - c.bottom, in[1] - c.left - c.right, in[2]};
  if (out[0] <= 0 || out[1] <= 0) {
    throw ConfigError(describe() + ": cropping ((" + std::to_string(c.top) + ", " + std::to_string(c.bottom) + "), (" +
                      std::to_string(c.left) + ", " + std::to_string(c.right) + ")) leaves nothing of the input " +
                      format_shape(in));
  }
  return out;
}

at::Tensor Cropping2DImpl::forward(const at::Tensor& x) {
  const Edges2D& c = options.cropping();  // from x's own size: a shared layer takes several
  return x.narrow(2, c.top, x.size(2) - c.top - c.bottom).narrow(3, c.left, x.size(3) - c.left - c.right);
}

std::string Cropping2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const Edges2D& c = options.cropping();
  const Shape& out = output_shape();
  const std::vector<std::string> ins{in[0], g.add_int64s(onnx_name(*this, "starts"), {c.top, c.left}),
                                     g.add_int64s(onnx_name(*this, "ends"), {c.top + out[0], c.left + out[1]}),
                                     g.add_int64s(onnx_name(*this, "axes"), {2, 3})};
  return g.add_node("Slice", ins, {}, onnx_name(*this, "Slice"));
}

TORCHFIT_REGISTER_LAYER(Cropping2D);

}  // namespace torchfit
