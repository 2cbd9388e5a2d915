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

std::vector<int64_t> Pooling2DImpl::pads_for(int64_t h, int64_t w) const {
  if (options.padding() != "same" || !built()) return pad_;  // during build: the size being built
  const Shape& in = input_shape();
  if (h == in[0] && w == in[1]) return pad_;
  std::vector<int64_t> pad;
  detail::window_output_2d(describe(), "pool", {h, w, in[2]}, *options.pool_size(), strides_, {1, 1}, "same", pad);
  return pad;
}

bool Pooling2DImpl::padded(const at::Tensor& x) const {
  const auto p = pads_for(x.size(2), x.size(3));
  return p[0] + p[1] + p[2] + p[3] > 0;
}

at::Tensor Pooling2DImpl::pad(const at::Tensor& x, double value) const {
  const auto p = pads_for(x.size(2), x.size(3));
  return at::constant_pad_nd(x, {p[2], p[3], p[0], p[1]}, value);
}

nlohmann::json Pooling2DImpl::config() const { return base_config(options); }

}  // namespace torchfit
