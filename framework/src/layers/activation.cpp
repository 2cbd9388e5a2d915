#include <torchfit/layers/activation.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

ActivationImpl::ActivationImpl(ActivationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  check_activation(options.activation(), describe());
}

ActivationImpl::ActivationImpl(std::string activation, std::string name)
    : ActivationImpl(ActivationOptions(std::move(activation)).name(std::move(name))) {}

Shape ActivationImpl::build_impl(const Shape& in) { return in; }

at::Tensor ActivationImpl::forward(const at::Tensor& x) { return apply_activation(options.activation(), x, false); }

nlohmann::json ActivationImpl::config() const { return base_config(options); }

std::string ActivationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_activation(options.activation(), in[0], name());
}

TORCHFIT_REGISTER_LAYER(Activation);

}  // namespace torchfit
