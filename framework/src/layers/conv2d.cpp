#include <torchfit/layers/conv2d.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"

namespace torchfit {

Conv2DImpl::Conv2DImpl(Conv2DOptions opts) : Layer("Conv2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.filters() <= 0) {
    throw ConfigError(describe() + ": filters must be > 0, got " + std::to_string(options.filters()));
  }
  detail::check_window_options(describe(), *options.kernel_size(), *options.strides(), *options.dilation_rate(),
                               options.padding());
  check_activation(options.activation(), describe());
}

Shape Conv2DImpl::build_impl(const Shape& in) {
  const auto k = *options.kernel_size();
  const auto hw = detail::window_output_2d(describe(), "kernel", in, k, *options.strides(), *options.dilation_rate(),
                                           options.padding(), pad_);
  const int64_t cin = in[2];
  const Shape out = {hw[0], hw[1], options.filters()};
  const int64_t fan_in = k[0] * k[1] * cin;
  const int64_t fan_out = k[0] * k[1] * options.filters();
  kernel = register_parameter("kernel", detail::glorot_uniform({options.filters(), cin, k[0], k[1]}, fan_in, fan_out));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({options.filters()}));
  return out;
}

at::Tensor Conv2DImpl::forward_without_activation(const at::Tensor& x) {
  return detail::conv2d_padded(x, kernel, bias, *options.strides(), *options.dilation_rate(), pad_);
}

at::Tensor Conv2DImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json Conv2DImpl::config() const { return base_config(options); }

int64_t Conv2DImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const auto& o = output_shape();
  return 2 * k[0] * k[1] * input_shape()[2] * options.filters() * o[0] * o[1];
}

TORCHFIT_REGISTER_LAYER(Conv2D);

}  // namespace torchfit
