#include <torchfit/layers/repeat_vector.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

RepeatVectorImpl::RepeatVectorImpl(RepeatVectorOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.n() < 1) throw ConfigError(describe() + ": n must be >= 1, got " + std::to_string(options.n()));
}

Shape RepeatVectorImpl::build_impl(const Shape& in) {
  if (in.size() != 1) throw ConfigError(describe() + " expects a vector (D), got " + format_shape(in));
  return {options.n(), in[0]};
}

at::Tensor RepeatVectorImpl::forward(const at::Tensor& x) {
  return x.unsqueeze(1).expand({x.size(0), options.n(), x.size(1)}).contiguous();
}

std::string RepeatVectorImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const std::string row =
      g.add_node("Unsqueeze", {in[0], g.add_int64s(onnx_name(*this, "axes"), {1})}, {}, onnx_name(*this, "Unsqueeze"));
  return g.add_node("Concat", std::vector<std::string>(static_cast<size_t>(options.n()), row), {{"axis", 1}},
                    onnx_name(*this, "Concat"));
}

IdentityImpl::IdentityImpl(IdentityOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

std::string IdentityImpl::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

TORCHFIT_REGISTER_LAYER(RepeatVector);
TORCHFIT_REGISTER_LAYER(Identity);

}  // namespace torchfit
