#include <torchfit/layers/masking.h>

#include <cmath>
#include <sstream>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

MaskingImpl::MaskingImpl(MaskingOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!std::isfinite(options.mask_value())) {
    std::ostringstream os;
    os << describe() << ": mask_value must be finite, got " << options.mask_value();
    throw ConfigError(os.str());
  }
}

Shape MaskingImpl::build_impl(const Shape& in) {
  if (in.size() < 2) {
    throw ConfigError(describe() + " needs an input (steps, features) or more axes, got " + format_shape(in));
  }
  return in;
}

// The features are the last Keras axis: held last, except an image's channels (N, C, H, W).
at::Tensor MaskingImpl::keep(const at::Tensor& x) const {
  return x.ne(options.mask_value()).any(x.dim() == 4 ? 1 : -1, /*keepdim=*/true);
}

at::Tensor MaskingImpl::forward(const at::Tensor& x) { return x * keep(x).to(x.scalar_type()); }

at::Tensor MaskingImpl::compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>&) const {
  const at::Tensor& x = inputs.at(0);
  return keep(x.detach()).squeeze(x.dim() == 4 ? 1 : -1);
}

std::string MaskingImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const int64_t axis = input_shape().size() == 3 ? 1 : -1;
  std::string e = g.add_node("Equal", {in[0], g.add_scalar(onnx_name(*this, "mask_value"), options.mask_value())}, {},
                             onnx_name(*this, "Equal"));
  e = g.add_node("Not", {e}, {}, onnx_name(*this, "Not"));
  e = g.add_node("Cast", {e}, {{"to", int64_t{1}}}, onnx_name(*this, "Cast"));  // float
  e = g.add_node("ReduceMax", {e}, {{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}},
                 onnx_name(*this, "ReduceMax"));
  return g.add_node("Mul", {in[0], e}, {}, onnx_name(*this, "Mul"));
}

TORCHFIT_REGISTER_LAYER(Masking);

}  // namespace torchfit
