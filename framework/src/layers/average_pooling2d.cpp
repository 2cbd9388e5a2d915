#include <torchfit/layers/average_pooling2d.h>

#include "layers/init.h"

namespace torchfit {

AveragePooling2DImpl::AveragePooling2DImpl(AveragePooling2DOptions opts)
    : Layer("AveragePooling2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const auto p = *options.pool_size();
  strides_ = options.strides() ? *options.strides() : std::vector<int64_t>{p[0], p[1]};
  if (strides_.size() == 1) strides_.push_back(strides_[0]);
  if (strides_.size() != 2 || p[0] <= 0 || p[1] <= 0 || strides_[0] <= 0 || strides_[1] <= 0) {
    throw ConfigError(describe() + ": pool_size and strides must be positive pairs");
  }
  if (options.padding() != "valid" && options.padding() != "same") {
    throw ConfigError(describe() + ": padding must be 'valid' or 'same', got '" + options.padding() + "'");
  }
}

Shape AveragePooling2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) {
    throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  }
  const auto p = *options.pool_size();
  Shape out(3);
  pad_ = {0, 0, 0, 0};
  for (int i = 0; i < 2; ++i) {
    out[i] = detail::window_output(in[i], p[i], strides_[i], 1, options.padding(), &pad_[2 * i], &pad_[2 * i + 1]);
    if (out[i] == 0) {
      throw ConfigError(describe() + ": pool " + std::to_string(p[0]) + "x" + std::to_string(p[1]) +
                        " is larger than its input " + format_shape(in));
    }
  }
  out[2] = in[2];
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

nlohmann::json AveragePooling2DImpl::config() const {
  auto c = base_config();
  const auto p = *options.pool_size();
  c["pool_size"] = {p[0], p[1]};
  c["strides"] = strides_;
  c["padding"] = options.padding();
  return c;
}

}  // namespace torchfit
