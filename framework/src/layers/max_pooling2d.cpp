#include <torchfit/layers/max_pooling2d.h>

#include <torchfit/layers/registry.h>

#include <limits>

#include "layers/init.h"

namespace torchfit {

MaxPooling2DImpl::MaxPooling2DImpl(MaxPooling2DOptions opts)
    : Layer("MaxPooling2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  strides_ = detail::pool_strides(describe(), *options.pool_size(), options.strides(), options.padding());
  options.strides(strides_);  // resolved (pool_size when unset), as Keras writes it in the config
}

Shape MaxPooling2DImpl::build_impl(const Shape& in) {
  const auto hw =
      detail::window_output_2d(describe(), "pool", in, *options.pool_size(), strides_, {1, 1}, options.padding(), pad_);
  return {hw[0], hw[1], in[2]};
}

at::Tensor MaxPooling2DImpl::forward(const at::Tensor& x) {
  const auto p = *options.pool_size();
  if (pad_[0] + pad_[1] + pad_[2] + pad_[3] == 0) {
    return at::max_pool2d(x, {p[0], p[1]}, strides_);
  }
  auto padded = at::constant_pad_nd(x, {pad_[2], pad_[3], pad_[0], pad_[1]}, -std::numeric_limits<float>::infinity());
  return at::max_pool2d(padded, {p[0], p[1]}, strides_);
}

nlohmann::json MaxPooling2DImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(MaxPooling2D);

}  // namespace torchfit
