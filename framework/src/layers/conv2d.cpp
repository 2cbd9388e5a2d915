#include <torchfit/layers/conv2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"

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

TORCHFIT_REGISTER_LAYER(Conv2D);

}  // namespace torchfit
