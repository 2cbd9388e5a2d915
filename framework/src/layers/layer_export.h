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
/// A sequence (N, steps, C) as an image for 2-D operators: Transpose to (N, C, steps), Reshape to
/// (N, C, 1, steps) (OpenCV 4.6 gets a 1-D Conv's asymmetric pads wrong). Returns the image.
std::string onnx_sequence_as_image(const Layer& l, io::OnnxGraph& g, const std::string& x, int64_t steps,
                                   int64_t channels);
/// The inverse of onnx_sequence_as_image for the operator's (N, C, 1, steps) result: Reshape to
/// (N, C, steps), Transpose to (N, steps, C).
std::string onnx_image_as_sequence(const Layer& l, io::OnnxGraph& g, const std::string& y, int64_t steps,
                                   int64_t channels);
/// (a[0], a[1]) of a 2-D window argument.
std::vector<int64_t> onnx_pair(at::IntArrayRef a);

// --- the convolution family (base_conv.cpp)

/// A Conv2D / Conv2DTranspose kernel from Keras's (k_h, k_w, a, b) to (b, a, k_h, k_w) (a Keras 1 "th"
/// kernel is stored so already), flipped in both spatial axes for Theano. ConfigError unless 4-D.
at::Tensor conv_kernel_from_keras(const std::string& who, const at::Tensor& k, const KerasWeightOptions& options);
/// The inverse for Keras 2: (b, a, k_h, k_w) → (k_h, k_w, a, b).
at::Tensor conv_kernel_to_keras(const at::Tensor& kernel);
/// A depthwise kernel from Keras's (k_h, k_w, C, m) to (C·m, 1, k_h, k_w) (output channel c·m + j, a
/// grouped convolution), flipped for Theano. ConfigError unless 4-D.
at::Tensor depthwise_kernel_from_keras(const std::string& who, const at::Tensor& k, const KerasWeightOptions& options);
/// The inverse for Keras 2, `channels` = C.
at::Tensor depthwise_kernel_to_keras(const at::Tensor& kernel, int64_t channels);
/// Keras's [kernel, bias] (bias only when `bias` is defined): `weights`' count checked, then weights[0]
/// through `kernel_to_torch` (into torchfit's layout) and weights[1] copied.
void set_kernel_and_bias(const std::string& who, at::Tensor& kernel, at::Tensor& bias,
                         const std::vector<at::Tensor>& weights,
                         const std::function<at::Tensor(const at::Tensor&)>& kernel_to_torch);
/// [kernel in Keras 2's layout, bias when defined].
std::vector<at::Tensor> kernel_and_bias_to_keras(const at::Tensor& keras_kernel, const at::Tensor& bias);

/// One ONNX Conv node's weights and window.
struct OnnxConv {
  at::Tensor kernel, bias;
  std::vector<int64_t> strides, dilations, pads;
  int64_t groups = 1;
};
/// The window of a built convolution layer `l` (its kernel, bias, strides, dilation and padding).
template <typename Conv>
OnnxConv onnx_conv_window(const Conv& l, int64_t groups) {
  return {l.kernel,
          l.bias,
          onnx_pair(*l.options.strides()),
          onnx_pair(*l.options.dilation_rate()),
          onnx_pads(l.padding_edges()),
          groups};
}
/// Appends a Conv node reading `x` with `c`'s weights (initializers "<layer>/<what>_kernel", "_bias"),
/// named "<layer>/<what>" ("<layer>/Conv" when `what` is empty); returns its output.
std::string onnx_conv_node(const Layer& l, io::OnnxGraph& g, const std::string& x, const OnnxConv& c,
                           const std::string& what);

// --- the pooling family (base_pooling.cpp)

/// MaxPool or AveragePool (`l.is_max()`) over the channels-first `x` with `window`, `strides` and ONNX
/// `pads`; Keras's "same" average counts only the real pixels (count_include_pad 0).
std::string onnx_pooling_node(const PoolingLayer& l, io::OnnxGraph& g, const std::string& x, at::IntArrayRef window,
                              at::IntArrayRef strides, const std::vector<int64_t>& pads);

}  // namespace torchfit::detail
