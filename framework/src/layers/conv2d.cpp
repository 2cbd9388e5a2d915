#include <torchfit/layers/conv2d.h>

#include <torchfit/layers/activation_fn.h>

#include "layers/init.h"

namespace torchfit {

Conv2DImpl::Conv2DImpl(Conv2DOptions opts) : Layer("Conv2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.filters() <= 0) {
    throw ConfigError(describe() + ": filters must be > 0, got " + std::to_string(options.filters()));
  }
  for (int i = 0; i < 2; ++i) {
    if ((*options.kernel_size())[i] <= 0 || (*options.strides())[i] <= 0 || (*options.dilation_rate())[i] <= 0) {
      throw ConfigError(describe() + ": kernel_size, strides and dilation_rate must be > 0");
    }
  }
  if (options.padding() != "valid" && options.padding() != "same") {
    throw ConfigError(describe() + ": padding must be 'valid' or 'same', got '" + options.padding() + "'");
  }
  check_activation(options.activation(), describe());
}

Shape Conv2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) {
    throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  }
  const auto k = *options.kernel_size();
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  const int64_t cin = in[2];
  Shape out(3);
  pad_ = {0, 0, 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t span = d[i] * (k[i] - 1) + 1;
    if (options.padding() == "valid") {
      if (span > in[i]) {
        throw ConfigError(describe() + ": kernel " + std::to_string(k[0]) + "x" + std::to_string(k[1]) +
                          " is larger than its input " + format_shape(in));
      }
      out[i] = (in[i] - span) / s[i] + 1;
    } else {
      auto [before, after] = detail::same_padding(in[i], k[i], s[i], d[i]);
      pad_[2 * i] = before;
      pad_[2 * i + 1] = after;
      out[i] = (in[i] + s[i] - 1) / s[i];
    }
  }
  out[2] = options.filters();
  symmetric_pad_ = pad_[0] == pad_[1] && pad_[2] == pad_[3];
  const int64_t fan_in = k[0] * k[1] * cin;
  const int64_t fan_out = k[0] * k[1] * options.filters();
  kernel = register_parameter("kernel", detail::glorot_uniform({options.filters(), cin, k[0], k[1]}, fan_in, fan_out));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({options.filters()}));
  return out;
}

at::Tensor Conv2DImpl::forward_without_activation(const at::Tensor& x) {
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  if (symmetric_pad_) {
    return at::conv2d(x, kernel, bias, s, {pad_[0], pad_[2]}, d);
  }
  auto padded = at::constant_pad_nd(x, {pad_[2], pad_[3], pad_[0], pad_[1]}, 0);
  return at::conv2d(padded, kernel, bias, s, at::IntArrayRef({0, 0}), d);
}

at::Tensor Conv2DImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json Conv2DImpl::config() const {
  auto c = base_config();
  const auto k = *options.kernel_size();
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  c["filters"] = options.filters();
  c["kernel_size"] = {k[0], k[1]};
  c["strides"] = {s[0], s[1]};
  c["padding"] = options.padding();
  c["dilation_rate"] = {d[0], d[1]};
  c["activation"] = options.activation();
  c["use_bias"] = options.use_bias();
  return c;
}

int64_t Conv2DImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const auto& o = output_shape();
  return 2 * k[0] * k[1] * input_shape()[2] * options.filters() * o[0] * o[1];
}

}  // namespace torchfit
