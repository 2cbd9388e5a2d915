#include <torchfit/layers/conv2d_transpose.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

namespace {
// Keras's conv_utils.deconv_output_length for one axis (k_eff = the dilated kernel).
int64_t deconv_output_length(int64_t in, int64_t k_eff, int64_t s, const std::string& padding,
                             const std::optional<int64_t>& output_padding) {
  if (!output_padding) return padding == "valid" ? in * s + std::max<int64_t>(k_eff - s, 0) : in * s;
  const int64_t pad = padding == "same" ? k_eff / 2 : 0;
  return (in - 1) * s + k_eff - 2 * pad + *output_padding;
}
}  // namespace

Conv2DTransposeImpl::Conv2DTransposeImpl(Conv2DTransposeOptions opts)
    : BaseConv2DImpl(keras_class_name, std::move(opts)) {
  if (options.filters() <= 0) {
    throw ConfigError(describe() + ": filters must be > 0, got " + std::to_string(options.filters()));
  }
  if (!options.output_padding()) return;
  for (int i = 0; i < 2; ++i) {
    const int64_t p = (**options.output_padding())[i], s = (*options.strides())[i];
    if (p < 0 || p >= s) {
      throw ConfigError(describe() + ": output_padding must be >= 0 and smaller than the stride (" + std::to_string(s) +
                        "), got " + std::to_string(p));
    }
  }
}

std::array<int64_t, 2> Conv2DTransposeImpl::output_hw(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  std::array<int64_t, 2> out{};
  pad_.assign(4, 0);
  for (int i = 0; i < 2; ++i) {
    const int64_t k = (*options.kernel_size())[i], s = (*options.strides())[i], d = (*options.dilation_rate())[i];
    const int64_t k_eff = d * (k - 1) + 1;
    std::optional<int64_t> op;
    if (options.output_padding()) op = (**options.output_padding())[i];
    out[i] = deconv_output_length(in[i], k_eff, s, options.padding(), op);
    full_[i] = (in[i] - 1) * s + k_eff;
    if (out[i] <= 0) {
      throw ConfigError(describe() + ": input " + format_shape(in) + " gives an empty output");
    }
    // TensorFlow pads the matching Conv2D of an out[i]-sized input with total // 2 before: crop that much.
    const int64_t before = options.padding() == "same" ? std::max<int64_t>(full_[i] - out[i], 0) / 2 : 0;
    pad_[2 * i] = before;
    pad_[2 * i + 1] = full_[i] - out[i] - before;  // < 0: zero rows appended
  }
  return out;
}

Conv2DTransposeImpl::Weights Conv2DTransposeImpl::make_weights(int64_t cin) {
  const auto k = *options.kernel_size();
  // Keras's fans for its (k_h, k_w, filters, C_in) kernel: fan_in = k_h·k_w·filters, fan_out = k_h·k_w·C_in.
  Weights w;
  w.kernel = register_parameter("kernel", detail::glorot_uniform({cin, options.filters(), k[0], k[1]},
                                                                 k[0] * k[1] * options.filters(), k[0] * k[1] * cin));
  if (options.use_bias()) w.bias = register_parameter("bias", at::zeros({options.filters()}));
  w.filters = options.filters();
  return w;
}

at::Tensor Conv2DTransposeImpl::forward_without_activation(const at::Tensor& x) {
  at::Tensor y =
      at::conv_transpose2d(x, kernel, {}, *options.strides(), /*padding=*/at::IntArrayRef({0, 0}),
                           /*output_padding=*/at::IntArrayRef({0, 0}), /*groups=*/1, *options.dilation_rate());
  // Negative pads crop (the "same" rows), positive ones append zero rows (output longer than the full result).
  if (pad_[0] != 0 || pad_[1] != 0 || pad_[2] != 0 || pad_[3] != 0) {
    y = at::constant_pad_nd(y, {-pad_[2], -pad_[3], -pad_[0], -pad_[1]}, 0);
  }
  if (bias.defined()) y = y + bias.view({1, -1, 1, 1});
  return y;
}

int64_t Conv2DTransposeImpl::flops_per_sample() const {
  if (!built()) return 0;
  const auto k = *options.kernel_size();
  const auto& in = input_shape();
  return 2 * k[0] * k[1] * in[2] * options.filters() * in[0] * in[1];
}

// Keras (k_h, k_w, F, C_in) → LibTorch's conv_transpose2d (C_in, F, k_h, k_w), the same permutation as a
// Conv2D kernel's. Keras 2+ only (Keras 1's Deconvolution2D is not read).
void Conv2DTransposeImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights,
                              [&](const at::Tensor& k) { return detail::conv_kernel_from_keras(who, k, o); });
}

std::vector<at::Tensor> Conv2DTransposeImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::conv_kernel_to_keras(kernel), bias);
}

std::string Conv2DTransposeImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  // padding_edges: rows cropped (> 0) or zero rows appended (< 0, only at the end) after the full result.
  // Appended rows are ONNX's output_padding (no input reaches them: the bias alone, as in torchfit);
  // symmetric crops are ConvTranspose's pads, others a Slice (OpenCV 4.6 refuses asymmetric pads).
  using detail::onnx_name;
  const auto& p = padding_edges();
  auto crop = [](int64_t v) { return std::max<int64_t>(v, 0); };
  const bool symmetric = crop(p[0]) == crop(p[1]) && crop(p[2]) == crop(p[3]);
  std::vector<std::string> ins{in[0], g.add_initializer(onnx_name(*this, "kernel"), kernel)};
  if (bias.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "bias"), bias));
  std::vector<io::OnnxAttribute> attributes{{"kernel_shape", std::vector<int64_t>{kernel.size(2), kernel.size(3)}},
                                            {"strides", detail::onnx_pair(*options.strides())},
                                            {"dilations", detail::onnx_pair(*options.dilation_rate())}};
  if (symmetric) attributes.emplace_back("pads", std::vector<int64_t>{crop(p[0]), crop(p[2]), crop(p[1]), crop(p[3])});
  if (p[1] < 0 || p[3] < 0) attributes.emplace_back("output_padding", std::vector<int64_t>{crop(-p[1]), crop(-p[3])});
  std::string y = g.add_node("ConvTranspose", ins, attributes, onnx_name(*this, "ConvTranspose"));
  if (!symmetric) {
    const Shape& out = output_shape();
    const std::vector<std::string> slice{y, g.add_int64s(onnx_name(*this, "starts"), {p[0], p[2]}),
                                         g.add_int64s(onnx_name(*this, "ends"), {p[0] + out[0], p[2] + out[1]}),
                                         g.add_int64s(onnx_name(*this, "axes"), {2, 3})};
    y = g.add_node("Slice", slice, {}, onnx_name(*this, "crop"));
  }
  return g.add_activation(options.activation(), y, name());
}

TORCHFIT_REGISTER_LAYER(Conv2DTranspose);

}  // namespace torchfit
