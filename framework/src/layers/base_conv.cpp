#include <torchfit/layers/base_conv.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit::detail {

void check_conv_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                        at::IntArrayRef dilation, const std::string& padding, const std::string& activation) {
  check_window_options(who, kernel, strides, dilation, padding);
  check_activation(activation, who);
}

std::array<int64_t, 2> conv_output_hw(const std::string& who, const Shape& in, at::IntArrayRef kernel,
                                      at::IntArrayRef strides, at::IntArrayRef dilation, const std::string& padding,
                                      std::vector<int64_t>& pad) {
  return window_output_2d(who, "kernel", in, kernel, strides, dilation, padding, pad);
}

at::Tensor conv2d_window(const at::Tensor& x, const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                         at::IntArrayRef dilation, const std::vector<int64_t>& pad, int64_t groups,
                         bool contiguous_on_cpu) {
  if (contiguous_on_cpu && x.is_cpu() && !x.is_contiguous() && x.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return conv2d_padded(x.contiguous(), kernel.contiguous(), bias, strides, dilation, pad, groups)
        .contiguous(at::MemoryFormat::ChannelsLast);
  }
  return conv2d_padded(x, kernel, bias, strides, dilation, pad, groups);
}

// Keras weights of the family (layer_export.h).

at::Tensor conv_kernel_from_keras(const std::string& who, const at::Tensor& k, const KerasWeightOptions& options) {
  expect_keras_weight_dims(who, k, 4, "kernel");
  at::Tensor out = options.keras1_th ? k : k.permute({3, 2, 0, 1});
  return options.flip_kernels ? out.flip({2, 3}) : out;
}

at::Tensor conv_kernel_to_keras(const at::Tensor& kernel) { return keras_weight_copy(kernel.permute({2, 3, 1, 0})); }

at::Tensor depthwise_kernel_from_keras(const std::string& who, const at::Tensor& k, const KerasWeightOptions& options) {
  expect_keras_weight_dims(who, k, 4, "depthwise kernel");
  at::Tensor t = k.permute({2, 3, 0, 1}).reshape({k.size(2) * k.size(3), 1, k.size(0), k.size(1)});
  return options.flip_kernels ? t.flip({2, 3}) : t;
}

at::Tensor depthwise_kernel_to_keras(const at::Tensor& kernel, int64_t channels) {
  const at::Tensor t = kernel.reshape({channels, kernel.size(0) / channels, kernel.size(2), kernel.size(3)});
  return keras_weight_copy(t.permute({2, 3, 0, 1}));
}

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

// ONNX: one Conv node (layer_export.h).
std::string onnx_conv_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                           const std::string& what) {
  std::vector<std::string> ins{x, g.add_initializer(onnx_name(l, what + "_kernel"), c.kernel)};
  if (c.bias.defined()) ins.push_back(g.add_initializer(onnx_name(l, what + "_bias"), c.bias));
  const std::vector<int64_t> k{c.kernel.size(2), c.kernel.size(3)};
  return g.add_node(
      "Conv", ins,
      {{"kernel_shape", k}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads}, {"group", c.groups}},
      onnx_name(l, what.empty() ? "Conv" : what));
}

}  // namespace torchfit::detail
