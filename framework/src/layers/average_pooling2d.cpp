#include <torchfit/layers/average_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"

namespace torchfit {

AveragePooling2DImpl::AveragePooling2DImpl(AveragePooling2DOptions opts)
    : Layer("AveragePooling2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  strides_ = detail::pool_strides(describe(), *options.pool_size(), options.strides(), options.padding());
  options.strides(strides_);  // resolved (pool_size when unset), as Keras writes it in the config
}

Shape AveragePooling2DImpl::build_impl(const Shape& in) {
  const auto p = *options.pool_size();
  const auto hw = detail::window_output_2d(describe(), "pool", in, p, strides_, {1, 1}, options.padding(), pad_);
  const Shape out = {hw[0], hw[1], in[2]};
  if (pad_[0] + pad_[1] + pad_[2] + pad_[3] > 0) {
    // Real pixels per window: pool a padded mask of ones (constant, depends on the shape only).
    auto mask = at::constant_pad_nd(at::ones({1, 1, in[0], in[1]}), {pad_[2], pad_[3], pad_[0], pad_[1]}, 0);
    inv_count_ = at::avg_pool2d(mask, {p[0], p[1]}, strides_).reciprocal();
  }
  return out;
}

at::Tensor AveragePooling2DImpl::forward(const at::Tensor& x) {
  const auto p = *options.pool_size();
  if (!inv_count_.defined()) return at::avg_pool2d(x, {p[0], p[1]}, strides_);
  auto padded = at::constant_pad_nd(x, {pad_[2], pad_[3], pad_[0], pad_[1]}, 0);
  // avg over the full window (padding counted as zeros) × window size / real pixels = mean of real pixels.
  return at::avg_pool2d(padded, {p[0], p[1]}, strides_) * inv_count_.to(x.device(), x.scalar_type());
}

nlohmann::json AveragePooling2DImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(AveragePooling2D);

}  // namespace torchfit
