#include <torchfit/layers/dense.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/dense_weight_grad.h"
#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

DenseImpl::DenseImpl(DenseOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.units() <= 0) {
    throw ConfigError(describe() + ": units must be > 0, got " + std::to_string(options.units()));
  }
  check_activation(options.activation(), describe());
}

Shape DenseImpl::build_impl(const Shape& in) {
  if (in.size() != 1) {
    throw ConfigError(describe() + " expects a 1-D input (D), got " + format_shape(in) +
                      " — add a Flatten layer before it");
  }
  kernel = register_parameter("kernel", detail::glorot_uniform({options.units(), in[0]}, in[0], options.units()));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({options.units()}));
  return {options.units()};
}

at::Tensor DenseImpl::forward_without_activation(const at::Tensor& x) { return detail::linear_train(x, kernel, bias); }

at::Tensor DenseImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json DenseImpl::config() const { return base_config(options); }

int64_t DenseImpl::flops_per_sample() const {
  if (!built()) return 0;
  return 2 * input_shape()[0] * options.units();
}

// Keras: kernel (D, units) → (units, D), bias (units). The rows apply as stored: torchfit's Flatten gives
// Keras's (H, W, C) order (flatten.h).
void DenseImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights, [&](const at::Tensor& k) {
    detail::expect_keras_weight_dims(who, k, 2, "kernel");
    return k.t();
  });
}

std::vector<at::Tensor> DenseImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::keras_weight_copy(kernel.t()), bias);
}

std::string DenseImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::vector<std::string> ins{in[0], g.add_initializer(onnx_name(*this, "kernel"), kernel)};  // y = x·Wᵀ + b
  if (bias.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "bias"), bias));
  const std::string y = g.add_node("Gemm", ins, {{"transB", 1}}, onnx_name(*this, "Gemm"));
  return g.add_activation(options.activation(), y, name());
}

TORCHFIT_REGISTER_LAYER(Dense);

}  // namespace torchfit
