#include <torchfit/layers/base_conv.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit::detail {

void check_conv_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                        at::IntArrayRef dilation, const std::string& padding, const std::string& activation,
                        bool causal) {
  check_window_options(who, kernel, strides, dilation, padding, causal);
  check_activation(activation, who);
}

void check_positive(const std::string& who, const char* what, int64_t v) {
  if (v <= 0) throw ConfigError(who + ": " + what + " must be > 0, got " + std::to_string(v));
}

std::vector<int64_t> conv_output_size(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                      at::IntArrayRef strides, at::IntArrayRef dilation, const std::string& padding,
                                      std::vector<int64_t>& pad) {
  return window_output_nd(who, "kernel", in, kernel, strides, dilation, padding, pad);
}

namespace {
// constant_pad_nd's list (last axis first) of the (before, after) edges per spatial axis; negative crops.
std::vector<int64_t> pad_list(const std::vector<int64_t>& edges, int64_t sign) {
  std::vector<int64_t> out;
  for (size_t i = edges.size(); i >= 2; i -= 2) {
    out.push_back(sign * edges[i - 2]);
    out.push_back(sign * edges[i - 1]);
  }
  return out;
}

bool all_zero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t e) { return e == 0; });
}

// The convolution of LibTorch for a channels-first tensor of 1, 2 or 3 spatial axes, no padding.
at::Tensor conv_nd(const at::Tensor& x, const at::Tensor& k, const at::Tensor& b, at::IntArrayRef s, at::IntArrayRef d,
                   int64_t groups) {
  const std::vector<int64_t> zeros(k.dim() - 2, 0);
  if (x.dim() == 3) return at::conv1d(x, k, b, s, zeros, d, groups);
  return at::conv3d(x, k, b, s, zeros, d, groups);
}

// Keras's conv_utils.deconv_output_length for one axis (k_eff = the dilated kernel).
int64_t deconv_output_length(int64_t in, int64_t k_eff, int64_t s, const std::string& padding,
                             const std::optional<int64_t>& output_padding) {
  if (!output_padding) return padding == "valid" ? in * s + std::max<int64_t>(k_eff - s, 0) : in * s;
  const int64_t pad = padding == "same" ? k_eff / 2 : 0;
  return (in - 1) * s + k_eff - 2 * pad + *output_padding;
}
}  // namespace

at::Tensor conv_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                       at::IntArrayRef dilation, const std::vector<int64_t>& pad, int64_t groups,
                       bool contiguous_on_cpu) {
  if (x.dim() != 4) {  // a sequence or a volume: padding applied explicitly whenever there is some
    const at::Tensor padded = all_zero(pad) ? x : at::constant_pad_nd(x, pad_list(pad, 1));
    return conv_nd(padded, kernel, bias, strides, dilation, groups);
  }
  if (contiguous_on_cpu && x.is_cpu() && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return conv2d_padded(x.contiguous(), kernel.contiguous(), bias, strides, dilation, pad, groups)
        .contiguous(at::MemoryFormat::ChannelsLast);
  }
  return conv2d_padded(x, kernel, bias, strides, dilation, pad, groups);
}

at::Tensor pointwise_conv(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias) {
  if (x.dim() == 4) return at::conv2d(x, kernel, bias);
  const std::vector<int64_t> ones(x.dim() - 2, 1);
  return conv_nd(x, kernel, bias, ones, ones, 1);
}

void check_output_padding(const std::string& who, const std::optional<std::vector<int64_t>>& output_padding,
                          at::IntArrayRef strides) {
  if (!output_padding) return;
  for (size_t i = 0; i < strides.size(); ++i) {
    const int64_t p = (*output_padding)[i], s = strides[i];
    if (p < 0 || p >= s) {
      throw ConfigError(who + ": output_padding must be >= 0 and smaller than the stride (" + std::to_string(s) +
                        "), got " + std::to_string(p));
    }
  }
}

std::vector<int64_t> conv_transpose_output_size(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                                at::IntArrayRef strides, at::IntArrayRef dilation,
                                                const std::string& padding,
                                                const std::optional<std::vector<int64_t>>& output_padding,
                                                std::vector<int64_t>& pad) {
  const size_t n = kernel.size();
  detail::expect_spatial_rank(who, in, n);
  std::vector<int64_t> out(n);
  pad.assign(2 * n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = strides[i], k_eff = dilation[i] * (kernel[i] - 1) + 1;
    std::optional<int64_t> op;
    if (output_padding) op = (*output_padding)[i];
    out[i] = deconv_output_length(in[i], k_eff, s, padding, op);
    if (out[i] <= 0) throw ConfigError(who + ": input " + format_shape(in) + " gives an empty output");
    const int64_t full = (in[i] - 1) * s + k_eff;
    // TensorFlow pads the matching convolution of an out[i]-sized input with total // 2 before: crop that much.
    const int64_t before = padding == "same" ? std::max<int64_t>(full - out[i], 0) / 2 : 0;
    pad[2 * i] = before;
    pad[2 * i + 1] = full - out[i] - before;  // < 0: zero steps appended
  }
  return out;
}

at::Tensor conv_transpose_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias,
                                 at::IntArrayRef strides, at::IntArrayRef dilation, const std::vector<int64_t>& pad) {
  const std::vector<int64_t> zeros(kernel.dim() - 2, 0);
  at::Tensor y;
  if (x.dim() == 3) y = at::conv_transpose1d(x, kernel, {}, strides, zeros, zeros, 1, dilation);
  if (x.dim() == 4) y = at::conv_transpose2d(x, kernel, {}, strides, zeros, zeros, 1, dilation);
  if (x.dim() == 5) y = at::conv_transpose3d(x, kernel, {}, strides, zeros, zeros, 1, dilation);
  // Negative pads crop (the "same" steps), positive ones append zeros (output longer than the full result).
  if (!all_zero(pad)) y = at::constant_pad_nd(y, pad_list(pad, -1), 0);
  if (!bias.defined()) return y;
  std::vector<int64_t> per_channel(y.dim(), 1);
  per_channel[1] = -1;
  return y + bias.view(per_channel);
}

at::Tensor conv_kernel_init(int64_t a, int64_t b, at::IntArrayRef k, int64_t fan_in_channels,
                            int64_t fan_out_channels) {
  std::vector<int64_t> shape{a, b};
  shape.insert(shape.end(), k.begin(), k.end());
  const int64_t area = product(k);
  return glorot_uniform(shape, area * fan_in_channels, area * fan_out_channels);
}

// Keras weights of the family.

namespace {
// Keras (k…, a, b) ↔ torchfit (b, a, k…): the permutation and its inverse for `spatial` axes.
std::vector<int64_t> keras_to_torch_order(int64_t spatial) {
  std::vector<int64_t> p{spatial + 1, spatial};
  for (int64_t i = 0; i < spatial; ++i) p.push_back(i);
  return p;
}
std::vector<int64_t> torch_to_keras_order(int64_t spatial) {
  std::vector<int64_t> p;
  for (int64_t i = 0; i < spatial; ++i) p.push_back(i + 2);
  p.push_back(1);
  p.push_back(0);
  return p;
}
// A kernel from Keras's (k…, a, b) to (b, a, k…) (a Keras 1 "th" 2-D kernel is stored so already), flipped
// in its 2-D spatial axes for Theano. ConfigError unless it has `dims` dimensions.
at::Tensor conv_kernel_from_keras(const std::string& who, const at::Tensor& k, int64_t dims,
                                  const KerasWeightOptions& options) {
  expect_keras_weight_dims(who, k, dims, "kernel");
  if (dims != 4) return k.permute(keras_to_torch_order(dims - 2));
  at::Tensor out = options.keras1_th ? k : k.permute(keras_to_torch_order(2));
  return options.flip_kernels ? out.flip({2, 3}) : out;
}
// A depthwise kernel from Keras's (k…, C, m) to (C·m, 1, k…), flipped for Theano (2-D).
at::Tensor depthwise_kernel_from_keras(const std::string& who, const at::Tensor& k, int64_t dims,
                                       const KerasWeightOptions& options) {
  expect_keras_weight_dims(who, k, dims, "depthwise kernel");
  const int64_t n = dims - 2;
  std::vector<int64_t> shape{k.size(n) * k.size(n + 1), 1};
  for (int64_t i = 0; i < n; ++i) shape.push_back(k.size(i));
  std::vector<int64_t> order{n, n + 1};
  for (int64_t i = 0; i < n; ++i) order.push_back(i);
  const at::Tensor t = k.permute(order).reshape(shape);
  return options.flip_kernels && n == 2 ? t.flip({2, 3}) : t;
}
at::Tensor depthwise_kernel_to_keras(const at::Tensor& kernel, int64_t channels) {
  std::vector<int64_t> shape{channels, kernel.size(0) / channels};
  shape.insert(shape.end(), kernel.sizes().begin() + 2, kernel.sizes().end());
  const int64_t n = kernel.dim() - 2;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) order.push_back(i + 2);
  order.push_back(0);
  order.push_back(1);
  return keras_weight_copy(kernel.reshape(shape).permute(order));
}
}  // namespace

void set_kernel_and_bias(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                         const std::vector<at::Tensor>& weights,
                         const std::function<at::Tensor(const at::Tensor&)>& kernel_to_torch) {
  expect_keras_weight_count(who, weights, bias.defined() ? 2 : 1);
  assign_keras_weight(who, kernel, kernel_to_torch(weights[0]), "kernel");
  if (bias.defined()) assign_keras_weight(who, bias, weights[1], "bias");
}

std::vector<at::Tensor> kernel_and_bias_to_keras(const at::Tensor& keras_kernel, const at::Tensor& bias) {
  std::vector<at::Tensor> out{keras_kernel};
  if (bias.defined()) out.push_back(keras_weight_copy(bias));
  return out;
}

void set_conv_keras_weights(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                            const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) {
  set_kernel_and_bias(who, kernel, bias, weights,
                      [&](const at::Tensor& k) { return conv_kernel_from_keras(who, k, kernel.dim(), options); });
}

std::vector<at::Tensor> conv_keras_weights(const at::Tensor& kernel, const at::Tensor& bias) {
  return kernel_and_bias_to_keras(keras_weight_copy(kernel.permute(torch_to_keras_order(kernel.dim() - 2))), bias);
}

void set_depthwise_keras_weights(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                                 const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) {
  set_kernel_and_bias(who, kernel, bias, weights,
                      [&](const at::Tensor& k) { return depthwise_kernel_from_keras(who, k, kernel.dim(), options); });
}

std::vector<at::Tensor> depthwise_keras_weights(const at::Tensor& kernel, const at::Tensor& bias, int64_t channels) {
  return kernel_and_bias_to_keras(depthwise_kernel_to_keras(kernel, channels), bias);
}

void set_separable_keras_weights(const std::string& who, at::Tensor& depthwise, at::Tensor& pointwise, at::Tensor& bias,
                                 const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) {
  expect_keras_weight_count(who, weights, bias.defined() ? 3 : 2);
  const int64_t dims = depthwise.dim();
  expect_keras_weight_dims(who, weights[1], dims, "pointwise kernel");
  assign_keras_weight(who, depthwise, depthwise_kernel_from_keras(who, weights[0], dims, options), "depthwise_kernel");
  assign_keras_weight(who, pointwise, weights[1].permute(keras_to_torch_order(dims - 2)), "pointwise_kernel");
  if (bias.defined()) assign_keras_weight(who, bias, weights[2], "bias");
}

std::vector<at::Tensor> separable_keras_weights(const at::Tensor& depthwise, const at::Tensor& pointwise,
                                                const at::Tensor& bias, int64_t channels) {
  std::vector<at::Tensor> out{depthwise_kernel_to_keras(depthwise, channels),
                              keras_weight_copy(pointwise.permute(torch_to_keras_order(pointwise.dim() - 2)))};
  if (bias.defined()) out.push_back(keras_weight_copy(bias));
  return out;
}

// ONNX (layer_export.h).

OnnxConv onnx_window(const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                     at::IntArrayRef dilation, const std::vector<int64_t>& edges, int64_t groups) {
  OnnxConv c{kernel, bias, strides.vec(), dilation.vec(), edges, groups};
  if (kernel.dim() != 3) return c;
  // A 1-D window as a 2-D one over (N, C, 1, steps): OpenCV 4.6 gets a 1-D Conv's asymmetric pads wrong.
  c.kernel = kernel.unsqueeze(2);
  c.strides.insert(c.strides.begin(), 1);
  c.dilations.insert(c.dilations.begin(), 1);
  c.pads.insert(c.pads.begin(), {0, 0});
  return c;
}

std::string onnx_channels_first(const Layer& l, io::OnnxGraph& g, const std::string& x, size_t spatial,
                                const std::function<std::string(const std::string&)>& body) {
  if (spatial == 2) return body(x);
  const Shape& in = l.input_shape();
  const Shape& out = l.output_shape();
  if (spatial == 3) {
    const std::string cf = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 4, 1, 2, 3}}},
                                      onnx_name(l, "to_channels_first"));
    return g.add_node("Transpose", {body(cf)}, {{"perm", std::vector<int64_t>{0, 2, 3, 4, 1}}},
                      onnx_name(l, "to_channels_last"));
  }
  return onnx_image_as_sequence(l, g, body(onnx_sequence_as_image(l, g, x, in[1])), out[1]);
}

std::string onnx_conv_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                           const std::string& what) {
  std::vector<std::string> ins{x, g.add_initializer(onnx_name(l, what + "_kernel"), c.kernel)};
  if (c.bias.defined()) ins.push_back(g.add_initializer(onnx_name(l, what + "_bias"), c.bias));
  const std::vector<int64_t> k(c.kernel.sizes().begin() + 2, c.kernel.sizes().end());
  return g.add_node("Conv", ins,
                    {{"kernel_shape", k},
                     {"strides", c.strides},
                     {"dilations", c.dilations},
                     {"pads", onnx_pads(c.pads)},
                     {"group", c.groups}},
                    onnx_name(l, what.empty() ? "Conv" : what));
}

std::string onnx_conv_transpose_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                                     const std::vector<int64_t>& out) {
  // c.pads: steps cropped (> 0) or zeros appended (< 0, only at the end) after the full result. Appended
  // steps are ONNX's output_padding (no input reaches them: the bias alone, as in torchfit); symmetric crops
  // are ConvTranspose's pads, others a Slice (OpenCV 4.6 refuses asymmetric pads).
  const std::vector<int64_t>& p = c.pads;
  const size_t n = p.size() / 2;
  auto crop = [](int64_t v) { return std::max<int64_t>(v, 0); };
  bool symmetric = true, appended = false;
  std::vector<int64_t> cropped, output_padding, starts, ends, axes;
  for (size_t i = 0; i < n; ++i) {
    symmetric = symmetric && crop(p[2 * i]) == crop(p[2 * i + 1]);
    appended = appended || p[2 * i + 1] < 0;
    cropped.push_back(crop(p[2 * i]));
    output_padding.push_back(crop(-p[2 * i + 1]));
    starts.push_back(p[2 * i]);
    ends.push_back(p[2 * i] + out[i]);
    axes.push_back(static_cast<int64_t>(i) + 2);
  }
  std::vector<std::string> ins{x, g.add_initializer(onnx_name(l, "kernel"), c.kernel)};
  if (c.bias.defined()) ins.push_back(g.add_initializer(onnx_name(l, "bias"), c.bias));
  std::vector<io::OnnxAttribute> attributes{
      {"kernel_shape", std::vector<int64_t>(c.kernel.sizes().begin() + 2, c.kernel.sizes().end())},
      {"strides", c.strides},
      {"dilations", c.dilations}};
  if (symmetric) {
    cropped.insert(cropped.end(), cropped.begin(), cropped.begin() + static_cast<std::ptrdiff_t>(n));
    attributes.emplace_back("pads", cropped);
  }
  if (appended) attributes.emplace_back("output_padding", output_padding);
  const std::string y = g.add_node("ConvTranspose", ins, attributes, onnx_name(l, "ConvTranspose"));
  if (symmetric) return y;
  return g.add_node("Slice",
                    {y, g.add_int64s(onnx_name(l, "starts"), starts), g.add_int64s(onnx_name(l, "ends"), ends),
                     g.add_int64s(onnx_name(l, "axes"), axes)},
                    {}, onnx_name(l, "crop"));
}

}  // namespace torchfit::detail
