#include <torchfit/layers/conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

Conv2DImpl::Conv2DImpl(Conv2DOptions opts) : BaseConv2DImpl(keras_class_name, std::move(opts)) {
  if (options.filters() <= 0) {
    throw ConfigError(describe() + ": filters must be > 0, got " + std::to_string(options.filters()));
  }
}

Conv2DImpl::Weights Conv2DImpl::make_weights(int64_t cin) {
  const auto k = *options.kernel_size();
  const int64_t fan_in = k[0] * k[1] * cin;
  const int64_t fan_out = k[0] * k[1] * options.filters();
  Weights w;
  w.kernel =
      register_parameter("kernel", detail::glorot_uniform({options.filters(), cin, k[0], k[1]}, fan_in, fan_out));
  if (options.use_bias()) w.bias = register_parameter("bias", at::zeros({options.filters()}));
  return w;
}

// Keras: kernel (k_h, k_w, C_in, F) → (F, C_in, k_h, k_w); a Keras 1 "th" kernel is stored so already.
void Conv2DImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights,
                              [&](const at::Tensor& k) { return detail::conv_kernel_from_keras(who, k, o); });
}

std::vector<at::Tensor> Conv2DImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::conv_kernel_to_keras(kernel), bias);
}

std::string Conv2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return g.add_activation(options.activation(),
                          detail::onnx_conv_node(*this, g, in[0], detail::onnx_conv_window(*this, 1), "Conv"), name());
}

TORCHFIT_REGISTER_LAYER(Conv2D);

}  // namespace torchfit
