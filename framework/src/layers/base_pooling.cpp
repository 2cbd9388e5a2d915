#include <torchfit/layers/base_pooling.h>

#include "layers/init.h"

namespace torchfit {

Pooling2DImpl::Pooling2DImpl(const char* class_name, Pooling2DOptions opts)
    : Layer(class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  strides_ = detail::pool_strides(describe(), *options.pool_size(), options.strides(), options.padding());
  options.strides(strides_);  // resolved (pool_size when unset), as Keras writes it in the config
}

Shape Pooling2DImpl::build_impl(const Shape& in) {
  const auto hw =
      detail::window_output_2d(describe(), "pool", in, *options.pool_size(), strides_, {1, 1}, options.padding(), pad_);
  return {hw[0], hw[1], in[2]};
}

bool Pooling2DImpl::padded() const { return pad_[0] + pad_[1] + pad_[2] + pad_[3] > 0; }

at::Tensor Pooling2DImpl::pad(const at::Tensor& x, double value) const {
  return at::constant_pad_nd(x, {pad_[2], pad_[3], pad_[0], pad_[1]}, value);
}

nlohmann::json Pooling2DImpl::config() const { return base_config(options); }

}  // namespace torchfit
