#include <torchfit/layers/zero_padding2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

ZeroPadding2DImpl::ZeroPadding2DImpl(ZeroPadding2DOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  options.padding().check_non_negative(describe(), "padding");
}

Shape ZeroPadding2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  const Edges2D& p = options.padding();
  return {in[0] + p.top + p.bottom, in[1] + p.left + p.right, in[2]};
}

at::Tensor ZeroPadding2DImpl::forward(const at::Tensor& x) {
  const Edges2D& p = options.padding();
  return at::constant_pad_nd(x, {p.left, p.right, p.top, p.bottom}, 0);
}

std::string ZeroPadding2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const Edges2D& p = options.padding();
  const std::string pads =
      g.add_int64s(detail::onnx_name(*this, "pads"), {0, 0, p.top, p.left, 0, 0, p.bottom, p.right});
  return g.add_node("Pad", {in[0], pads}, {{"mode", "constant"}}, detail::onnx_name(*this, "Pad"));
}

TORCHFIT_REGISTER_LAYER(ZeroPadding2D);

}  // namespace torchfit
