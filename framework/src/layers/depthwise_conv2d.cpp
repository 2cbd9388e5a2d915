#include <torchfit/layers/depthwise_conv2d.h>

#include <torchfit/layers/activation_fn.h>

#include "layers/init.h"

namespace torchfit {

DepthwiseConv2DImpl::DepthwiseConv2DImpl(DepthwiseConv2DOptions opts)
    : Layer("DepthwiseConv2D", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.depth_multiplier() <= 0) {
    throw ConfigError(describe() + ": depth_multiplier must be > 0, got " + std::to_string(options.depth_multiplier()));
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

Shape DepthwiseConv2DImpl::build_impl(const Shape& in) {
  if (in.size() != 3) {
    throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  }
  const auto k = *options.kernel_size();
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  const int64_t c = in[2], m = options.depth_multiplier();
  Shape out(3);
  pad_ = {0, 0, 0, 0};
  for (int i = 0; i < 2; ++i) {
    out[i] = detail::window_output(in[i], k[i], s[i], d[i], options.padding(), &pad_[2 * i], &pad_[2 * i + 1]);
    if (out[i] == 0) {
      throw ConfigError(describe() + ": kernel " + std::to_string(k[0]) + "x" + std::to_string(k[1]) +
                        " is larger than its input " + format_shape(in));
    }
  }
  out[2] = c * m;
  groups_ = c;
  // Keras fans for a (k_h, k_w, C, m) kernel: fan_in = k_h·k_w·C, fan_out = k_h·k_w·m.
  depthwise_kernel = register_parameter(
      "depthwise_kernel", detail::glorot_uniform({c * m, 1, k[0], k[1]}, k[0] * k[1] * c, k[0] * k[1] * m));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({c * m}));
  return out;
}

at::Tensor DepthwiseConv2DImpl::forward_without_activation(const at::Tensor& x) {
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  if (pad_[0] == pad_[1] && pad_[2] == pad_[3]) {
    return at::conv2d(x, depthwise_kernel, bias, s, {pad_[0], pad_[2]}, d, groups_);
  }
  auto padded = at::constant_pad_nd(x, {pad_[2], pad_[3], pad_[0], pad_[1]}, 0);
  return at::conv2d(padded, depthwise_kernel, bias, s, at::IntArrayRef({0, 0}), d, groups_);
}

at::Tensor DepthwiseConv2DImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json DepthwiseConv2DImpl::config() const {
  auto c = base_config();
  const auto k = *options.kernel_size();
  const auto s = *options.strides();
  const auto d = *options.dilation_rate();
  c["kernel_size"] = {k[0], k[1]};
  c["depth_multiplier"] = options.depth_multiplier();
  c["strides"] = {s[0], s[1]};
  c["padding"] = options.padding();
  c["dilation_rate"] = {d[0], d[1]};
  c["activation"] = options.activation();
  c["use_bias"] = options.use_bias();
  return c;
}

int64_t DepthwiseConv2DImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const auto& o = output_shape();
  return 2 * k[0] * k[1] * o[0] * o[1] * o[2];
}

}  // namespace torchfit
