#pragma once
// What the built-in layers share for their Keras weights (Layer::set_keras_weights_impl and
// keras_weights_impl) and their ONNX export (Layer::export_onnx), each layer writing its own in its source
// file: weight checks and copies and ONNX names (layer.cpp), the convolution family's kernels and Conv
// node (base_conv.cpp), the pooling family's node (base_pooling.cpp).
#include <functional>
#include <string>
#include <vector>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/layer.h>

namespace torchfit {
class PoolingLayer;
}

namespace torchfit::detail {

// --- Keras weights (layer.cpp). `who` is the layer's describe(): "layer 'conv2d' (Conv2D)".

/// ConfigError "<who>: got N Keras weights, the layer takes n" unless `weights` holds `n`.
void expect_keras_weight_count(const std::string& who, const std::vector<at::Tensor>& weights, size_t n);
/// ConfigError "<who>: the <what> has d dimensions, `dims` expected" unless `value` has `dims`.
void expect_keras_weight_dims(const std::string& who, const at::Tensor& value, int64_t dims, const std::string& what);
/// Copies `value` (already in torchfit's layout) into `param`, converted to its dtype. ConfigError naming
/// `who` and `what` when `param` is undefined or the shapes differ.
void assign_keras_weight(const std::string& who, at::Tensor& param, const at::Tensor& value, const std::string& what);
/// `t` as Keras gives a weight back: a detached, contiguous copy.
at::Tensor keras_weight_copy(const at::Tensor& t);

// --- ONNX (layer.cpp)

/// "<layer name>/<suffix>": the name hint of a layer's nodes and initializers.
std::string onnx_name(const Layer& layer, const std::string& suffix);
/// ONNX pads (begins…, ends…) from torchfit's padding edges (before, after) per axis: an image's
/// (top, bottom, left, right) → (top, left, bottom, right).
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& edges);
/// A sequence (N, steps, C) of `channels` C as an image for 2-D operators: Transpose to (N, C, steps),
/// Reshape to (N, C, 1, steps) (OpenCV 4.6 gets a 1-D Conv's asymmetric pads wrong). Returns the image.
/// The steps are the Reshape's −1: the nodes hold no built length.
std::string onnx_sequence_as_image(const Layer& l, io::OnnxGraph& g, const std::string& x, int64_t channels);
/// The inverse of onnx_sequence_as_image for the operator's (N, C, 1, steps) result of `channels` C:
/// Reshape to (N, C, steps), Transpose to (N, steps, C).
std::string onnx_image_as_sequence(const Layer& l, io::OnnxGraph& g, const std::string& y, int64_t channels);
/// (a[0], a[1]) of a 2-D window argument.
std::vector<int64_t> onnx_pair(at::IntArrayRef a);

// --- the convolution family (base_conv.cpp; its Keras weights are in layers/base_conv.h)

/// Keras's [kernel, bias] (bias only when `bias` is defined): `weights`' count checked, then weights[0]
/// through `kernel_to_torch` (into torchfit's layout) and weights[1] copied.
void set_kernel_and_bias(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                         const std::vector<at::Tensor>& weights,
                         const std::function<at::Tensor(const at::Tensor&)>& kernel_to_torch);
/// [kernel in Keras 2's layout, bias when defined].
std::vector<at::Tensor> kernel_and_bias_to_keras(const at::Tensor& keras_kernel, const at::Tensor& bias);

/// One ONNX Conv / ConvTranspose node's weights and window; `pads` are torchfit's edges (before, after per
/// spatial axis).
struct OnnxConv {
  at::Tensor kernel, bias;
  std::vector<int64_t> strides, dilations, pads;
  int64_t groups = 1;
};
/// That window; a 1-D one (a 3-D kernel) as a 2-D window over (N, C, 1, steps) (onnx_channels_first).
OnnxConv onnx_window(const at::Tensor& kernel, const at::Tensor& bias, at::IntArrayRef strides,
                     at::IntArrayRef dilation, const std::vector<int64_t>& edges, int64_t groups);
/// The window of a built convolution layer `l` (its kernel, bias, strides, dilation and padding).
template <typename Conv>
OnnxConv onnx_conv_window(const Conv& l, int64_t groups) {
  return onnx_window(l.kernel, l.bias, *l.options.strides(), *l.options.dilation_rate(), l.padding_edges(), groups);
}
/// `body` (the nodes over a channels-first tensor) between the layer's moves of the channels: a sequence
/// (N, steps, C) is Transposed and Reshaped to (N, C, 1, steps) and back (a 2-D Conv), a volume
/// (N, D, H, W, C) Transposed to (N, C, D, H, W) and back; an image is passed as it is.
std::string onnx_channels_first(const Layer& l, io::OnnxGraph& g, const std::string& x, size_t spatial,
                                const std::function<std::string(const std::string&)>& body);
/// Appends a Conv node reading `x` with `c`'s weights (initializers "<layer>/<what>_kernel", "_bias"),
/// named "<layer>/<what>" ("<layer>/Conv" when `what` is empty); returns its output.
std::string onnx_conv_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                           const std::string& what);
/// Appends a ConvTranspose node (and a Slice for an asymmetric crop) giving the spatial sizes `out`.
std::string onnx_conv_transpose_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                                     const std::vector<int64_t>& out);

/// A convolution layer (Conv1D/2D/3D, DepthwiseConv1D/2D: `groups` = 1 or C): its Conv between the
/// channel moves, then its activation.
template <typename Conv>
std::string onnx_conv_layer(const Conv& l, io::OnnxGraph& g, const std::string& x, int64_t groups,
                            const std::string& what) {
  const std::string y = onnx_channels_first(l, g, x, Conv::spatial_dims, [&](const std::string& v) {
    return onnx_conv_node(l, g, v, onnx_conv_window(l, groups), what);
  });
  return g.add_activation(l.options.activation(), y, l.name());
}
/// A separable convolution: Conv (group = C, no bias) → 1-wide Conv (+ activation).
template <typename Conv>
std::string onnx_separable_layer(const Conv& l, io::OnnxGraph& g, const std::string& x) {
  const size_t n = Conv::spatial_dims;
  const std::string y = onnx_channels_first(l, g, x, n, [&](const std::string& v) {
    OnnxConv depthwise = onnx_conv_window(l, l.input_shape()[n]);
    depthwise.bias = at::Tensor();
    const std::string d = onnx_conv_node(l, g, v, depthwise, "DepthwiseConv");
    const std::vector<int64_t> ones(n, 1);
    const OnnxConv pointwise = onnx_window(l.pointwise_kernel, l.bias, ones, ones, std::vector<int64_t>(2 * n, 0), 1);
    return onnx_conv_node(l, g, d, pointwise, "PointwiseConv");
  });
  return g.add_activation(l.options.activation(), y, l.name());
}
/// A transposed convolution: ConvTranspose (+ Slice) (+ activation).
template <typename Conv>
std::string onnx_conv_transpose_layer(const Conv& l, io::OnnxGraph& g, const std::string& x) {
  const size_t n = Conv::spatial_dims;
  const std::string y = onnx_channels_first(l, g, x, n, [&](const std::string& v) {
    std::vector<int64_t> out(l.output_shape().begin(), l.output_shape().begin() + static_cast<std::ptrdiff_t>(n));
    if (n == 1) out.insert(out.begin(), 1);  // as a 2-D window over (N, C, 1, steps)
    return onnx_conv_transpose_node(l, g, v, onnx_conv_window(l, 1), out);
  });
  return g.add_activation(l.options.activation(), y, l.name());
}

// --- the pooling family (base_pooling.cpp)

/// MaxPool or AveragePool (`l.is_max()`) over the channels-first `x` with `window`, `strides` and ONNX
/// `pads`; Keras's "same" average counts only the real pixels (count_include_pad 0).
std::string onnx_pooling_node(const PoolingLayer& l, io::OnnxGraph& g, const std::string& x, at::IntArrayRef window,
                              at::IntArrayRef strides, const std::vector<int64_t>& pads);

}  // namespace torchfit::detail
