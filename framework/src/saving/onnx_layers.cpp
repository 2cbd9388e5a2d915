#include "saving/onnx_layers.h"

#include <algorithm>
#include <functional>
#include <map>

#include <torchfit/error.h>
#include <torchfit/layers/activation.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/conv2d_transpose.h>
#include <torchfit/layers/cropping2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/layer_normalization.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/rescaling.h>
#include <torchfit/layers/separable_conv2d.h>
#include <torchfit/layers/up_sampling2d.h>
#include <torchfit/layers/zero_padding2d.h>

// Each exporter writes exactly what the layer's forward() computes in torchfit (the (N, C, H, W) tensor
// order, TensorFlow's padding), in inference mode. docs/deployment.md lists the operators.
namespace torchfit::saving::detail {

namespace {

using Inputs = std::vector<std::string>;
using Exporter = std::function<std::string(const Layer&, OnnxGraph&, const Inputs&)>;

std::string op(const Layer& l, const std::string& suffix) { return l.name() + "/" + suffix; }

// ONNX pads (top, left, bottom, right) from torchfit's (top, bottom, left, right).
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p) { return {p[0], p[2], p[1], p[3]}; }

std::vector<int64_t> pair(at::IntArrayRef a) { return {a[0], a[1]}; }

struct ConvSpec {
  at::Tensor kernel, bias;
  std::vector<int64_t> strides, dilations, pads;
  int64_t groups = 1;
};

std::string conv_node(const Layer& l, OnnxGraph& g, const std::string& x, const ConvSpec& c, const std::string& what) {
  Inputs ins{x, g.add_initializer(op(l, what + "_kernel"), c.kernel)};
  if (c.bias.defined()) ins.push_back(g.add_initializer(op(l, what + "_bias"), c.bias));
  const std::vector<int64_t> k{c.kernel.size(2), c.kernel.size(3)};
  return g.add_node(
      "Conv", ins,
      {{"kernel_shape", k}, {"strides", c.strides}, {"dilations", c.dilations}, {"pads", c.pads}, {"group", c.groups}},
      op(l, what.empty() ? "Conv" : what));
}

template <typename Impl>
ConvSpec window_spec(const Impl& l, int64_t groups) {
  return {l.kernel, l.bias, pair(*l.options.strides()), pair(*l.options.dilation_rate()), onnx_pads(l.padding_edges()),
          groups};
}

std::string conv2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const Conv2DImpl&>(layer);
  return g.add_activation(l.options.activation(), conv_node(l, g, in[0], window_spec(l, 1), "Conv"), l.name());
}

std::string depthwise_conv2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const DepthwiseConv2DImpl&>(layer);
  const std::string y = conv_node(l, g, in[0], window_spec(l, l.input_shape()[2]), "DepthwiseConv");
  return g.add_activation(l.options.activation(), y, l.name());
}

std::string separable_conv2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const SeparableConv2DImpl&>(layer);
  ConvSpec depthwise = window_spec(l, l.input_shape()[2]);
  depthwise.bias = at::Tensor();
  const std::string d = conv_node(l, g, in[0], depthwise, "DepthwiseConv");
  const ConvSpec pointwise{l.pointwise_kernel, l.bias, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1};
  return g.add_activation(l.options.activation(), conv_node(l, g, d, pointwise, "PointwiseConv"), l.name());
}

std::string conv2d_transpose(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const Conv2DTransposeImpl&>(layer);
  // padding_edges: rows cropped (> 0) or zero rows appended (< 0, only at the end) after the full result.
  // Appended rows are ONNX's output_padding (no input reaches them: the bias alone, as in torchfit);
  // symmetric crops are ConvTranspose's pads, others a Slice (OpenCV 4.6 refuses asymmetric pads).
  const auto& p = l.padding_edges();
  auto crop = [](int64_t v) { return std::max<int64_t>(v, 0); };
  const bool symmetric = crop(p[0]) == crop(p[1]) && crop(p[2]) == crop(p[3]);
  Inputs ins{in[0], g.add_initializer(op(l, "kernel"), l.kernel)};
  if (l.bias.defined()) ins.push_back(g.add_initializer(op(l, "bias"), l.bias));
  std::vector<OnnxAttribute> attributes{{"kernel_shape", std::vector<int64_t>{l.kernel.size(2), l.kernel.size(3)}},
                                        {"strides", pair(*l.options.strides())},
                                        {"dilations", pair(*l.options.dilation_rate())}};
  if (symmetric) attributes.emplace_back("pads", std::vector<int64_t>{crop(p[0]), crop(p[2]), crop(p[1]), crop(p[3])});
  if (p[1] < 0 || p[3] < 0) attributes.emplace_back("output_padding", std::vector<int64_t>{crop(-p[1]), crop(-p[3])});
  std::string y = g.add_node("ConvTranspose", ins, attributes, op(l, "ConvTranspose"));
  if (!symmetric) {
    const Shape& out = l.output_shape();
    const Inputs slice{y, g.add_int64s(op(l, "starts"), {p[0], p[2]}),
                       g.add_int64s(op(l, "ends"), {p[0] + out[0], p[2] + out[1]}),
                       g.add_int64s(op(l, "axes"), {2, 3})};
    y = g.add_node("Slice", slice, {}, op(l, "crop"));
  }
  return g.add_activation(l.options.activation(), y, l.name());
}

std::string dense(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const DenseImpl&>(layer);
  Inputs ins{in[0], g.add_initializer(op(l, "kernel"), l.kernel)};  // (units, D): y = x·Wᵀ + b
  if (l.bias.defined()) ins.push_back(g.add_initializer(op(l, "bias"), l.bias));
  const std::string y = g.add_node("Gemm", ins, {{"transB", 1}}, op(l, "Gemm"));
  return g.add_activation(l.options.activation(), y, l.name());
}

std::string batch_normalization(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const BatchNormalizationImpl&>(layer);
  const at::Tensor ones = at::ones_like(l.moving_mean), zeros = at::zeros_like(l.moving_mean);
  const Inputs ins{in[0], g.add_initializer(op(l, "gamma"), l.gamma.defined() ? l.gamma : ones),
                   g.add_initializer(op(l, "beta"), l.beta.defined() ? l.beta : zeros),
                   g.add_initializer(op(l, "moving_mean"), l.moving_mean),
                   g.add_initializer(op(l, "moving_variance"), l.moving_variance)};
  const int64_t t = l.tensor_axis();
  if (t == 1)
    return g.add_node("BatchNormalization", ins, {{"epsilon", l.options.epsilon()}}, op(l, "BatchNormalization"));
  // ONNX normalises dim 1: the layer's axis is swapped there and back (a swap is its own inverse).
  std::vector<int64_t> perm(l.input_shape().size() + 1);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[1], perm[static_cast<size_t>(t)]);
  Inputs moved = ins;
  moved[0] = g.add_node("Transpose", {in[0]}, {{"perm", perm}}, op(l, "axis_to_1"));
  const std::string y =
      g.add_node("BatchNormalization", moved, {{"epsilon", l.options.epsilon()}}, op(l, "BatchNormalization"));
  return g.add_node("Transpose", {y}, {{"perm", perm}}, op(l, "axis_back"));
}

std::string pooling(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const Pooling2DImpl&>(layer);
  const bool max = l.class_name() == MaxPooling2DImpl::keras_class_name;
  std::vector<OnnxAttribute> attributes{{"kernel_shape", pair(*l.options.pool_size())},
                                        {"strides", *l.options.strides()},
                                        {"pads", onnx_pads(l.padding_edges())}};
  // Keras's "same" average counts only the real pixels of a window (ONNX's count_include_pad = 0).
  if (!max) attributes.emplace_back("count_include_pad", 0);
  return g.add_node(max ? "MaxPool" : "AveragePool", {in[0]}, attributes, op(l, max ? "MaxPool" : "AveragePool"));
}

std::string global_pooling(const Layer& l, OnnxGraph& g, const Inputs& in) {
  const std::string kind = l.class_name() == "GlobalMaxPooling2D" ? "GlobalMaxPool" : "GlobalAveragePool";
  const std::string y = g.add_node(kind, {in[0]}, {}, op(l, kind));  // (N, C, 1, 1)
  return g.add_node("Flatten", {y}, {{"axis", 1}}, op(l, "Flatten"));
}

std::string flatten(const Layer& l, OnnxGraph& g, const Inputs& in) {
  // As flatten.cpp: an image is flattened in Keras's (H, W, C) order unless the layer keeps (C, H, W).
  std::string x = in[0];
  if (l.input_shape().size() == 3 && dynamic_cast<const FlattenImpl&>(l).flattens_channels_last()) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, op(l, "to_channels_last"));
  }
  return g.add_node("Flatten", {x}, {{"axis", 1}}, op(l, "Flatten"));
}

std::string reshape(const Layer& l, OnnxGraph& g, const Inputs& in) {
  // As reshape.cpp: Keras's reshape acts on the (N, H, W, C) order.
  std::string x = in[0];
  if (l.input_shape().size() == 3) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, op(l, "to_channels_last"));
  }
  std::vector<int64_t> target{-1};
  for (int64_t d : l.output_shape()) target.push_back(d);
  x = g.add_node("Reshape", {x, g.add_int64s(op(l, "shape"), target)}, {}, op(l, "Reshape"));
  if (l.output_shape().size() == 3) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}, op(l, "to_channels_first"));
  }
  return x;
}

std::string activation(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const ActivationImpl&>(layer);
  return g.add_activation(l.options.activation(), in[0], l.name());
}

std::string relu(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const ReLUImpl&>(layer);
  const double slope = l.options.negative_slope(), threshold = l.options.threshold();
  const auto& max_value = l.options.max_value();
  const std::string& x = in[0];
  if (slope != 0.0 && !max_value && threshold == 0.0) {
    return g.add_node("LeakyRelu", {x}, {{"alpha", slope}}, op(l, "LeakyRelu"));
  }
  // The same steps as ReLUImpl::forward.
  std::string y;
  if (threshold != 0.0) {
    const std::string above =
        g.add_node("Greater", {x, g.add_scalar(op(l, "threshold"), threshold)}, {}, op(l, "above_threshold"));
    const std::string mask = g.add_node("Cast", {above}, {{"to", int64_t{1}}}, op(l, "mask"));
    y = g.add_node("Mul", {x, mask}, {}, op(l, "thresholded"));
  } else {
    y = g.add_node("Relu", {x}, {}, op(l, "Relu"));
  }
  if (max_value) {
    // min(y, m) = m − relu(m − y), from Mul/Add by constants and Relu: OpenCV 4.6 reads neither Clip with
    // min/max inputs (opset ≥ 11) nor Min with a constant (one rounding of m − y: |error| ≤ ulp(m)).
    const std::string m = g.add_scalar(op(l, "max_value"), *max_value), minus = g.add_scalar(op(l, "minus_one"), -1.0f);
    const std::string room = g.add_node("Add", {g.add_node("Mul", {y, minus}, {}, op(l, "neg")), m}, {}, op(l, "room"));
    const std::string cut =
        g.add_node("Mul", {g.add_node("Relu", {room}, {}, op(l, "room_relu")), minus}, {}, op(l, "cut"));
    y = g.add_node("Add", {cut, m}, {}, op(l, "capped"));
  }
  if (slope != 0.0) {
    // threshold − x as −x + threshold (the same value; OpenCV 4.6 takes constants second).
    const std::string neg_x = g.add_node("Mul", {x, g.add_scalar(op(l, "minus_one"), -1.0f)}, {}, op(l, "neg_x"));
    const std::string below =
        g.add_node("Add", {neg_x, g.add_scalar(op(l, "threshold"), threshold)}, {}, op(l, "below"));
    const std::string neg = g.add_node("Relu", {below}, {}, op(l, "below_relu"));
    const std::string scaled =
        g.add_node("Mul", {neg, g.add_scalar(op(l, "negative_slope"), slope)}, {}, op(l, "negative_part"));
    y = g.add_node("Sub", {y, scaled}, {}, op(l, "ReLU"));
  }
  return y;
}

std::string leaky_relu(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const LeakyReLUImpl&>(layer);
  return g.add_node("LeakyRelu", {in[0]}, {{"alpha", l.options.alpha()}}, op(l, "LeakyRelu"));
}

std::string elu(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const ELUImpl&>(layer);
  return g.add_node("Elu", {in[0]}, {{"alpha", l.options.alpha()}}, op(l, "Elu"));
}

std::string softmax(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const SoftmaxImpl&>(layer);
  if (l.tensor_axes().size() != 1) {
    throw ConfigError("ONNX export: layer '" + l.name() + "' (Softmax): a softmax over several axes " +
                      nlohmann::json(l.options.axis()).dump() + " is not supported (ONNX Softmax takes one axis)");
  }
  return g.add_node("Softmax", {in[0]}, {{"axis", l.tensor_axes()[0]}}, op(l, "Softmax"));
}

std::string rescaling(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const RescalingImpl&>(layer);
  std::string y = g.add_node("Mul", {in[0], g.add_scalar(op(l, "scale"), l.options.scale())}, {}, op(l, "Mul"));
  if (l.options.offset() != 0.0) {
    y = g.add_node("Add", {y, g.add_scalar(op(l, "offset"), l.options.offset())}, {}, op(l, "Add"));
  }
  return y;
}

std::string zero_padding2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const ZeroPadding2DImpl&>(layer);
  const Edges2D& p = l.options.padding();
  const std::string pads = g.add_int64s(op(l, "pads"), {0, 0, p.top, p.left, 0, 0, p.bottom, p.right});
  return g.add_node("Pad", {in[0], pads}, {{"mode", "constant"}}, op(l, "Pad"));
}

std::string cropping2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const Cropping2DImpl&>(layer);
  const Edges2D& c = l.options.cropping();
  const Shape& out = l.output_shape();
  const Inputs ins{in[0], g.add_int64s(op(l, "starts"), {c.top, c.left}),
                   g.add_int64s(op(l, "ends"), {c.top + out[0], c.left + out[1]}), g.add_int64s(op(l, "axes"), {2, 3})};
  return g.add_node("Slice", ins, {}, op(l, "Slice"));
}

std::string up_sampling2d(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const UpSampling2DImpl&>(layer);
  const auto s = *l.options.size();
  const std::string scales = g.add_initializer(
      op(l, "scales"), at::tensor(std::vector<float>{1.0f, 1.0f, static_cast<float>(s[0]), static_cast<float>(s[1])}));
  std::vector<OnnxAttribute> attributes;
  if (l.options.interpolation() == "bilinear") {
    // TensorFlow's half-pixel centres, source clamped at the edges (up_sampling2d.cpp).
    attributes = {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}};
  } else {
    // Each pixel repeated: source = floor(i / s).
    attributes = {{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}};
  }
  return g.add_node("Resize", {in[0], "", scales}, attributes, op(l, "Resize"));
}

// gamma/beta (Keras order over the normalized axes) as a tensor broadcasting against (N, C, H, W) / (N, D).
at::Tensor layer_norm_param(const LayerNormalizationImpl& l, const at::Tensor& p) {
  const Shape& in = l.input_shape();
  const auto rank = static_cast<int64_t>(in.size()) + 1;
  std::vector<int64_t> view(static_cast<size_t>(rank), 1);
  for (int64_t a : l.options.axis().axes) {
    const int64_t k = a < 0 ? a + rank : a;
    view[static_cast<size_t>(k)] = in[static_cast<size_t>(k - 1)];
  }
  at::Tensor v = p.reshape(view);
  return v.dim() == 4 ? v.permute({0, 3, 1, 2}).contiguous() : v;
}

// Mean over `axes` (keepdims) as one ReduceMean per axis, last axis first — the same mean (equal-sized
// groups); OpenCV 4.10 computes a ReduceMean over several axes of a batch wrongly (checked: LN over (H, W, C)).
std::string reduce_mean(const Layer& l, OnnxGraph& g, std::string x, const std::vector<int64_t>& axes,
                        const std::string& what) {
  for (auto a = axes.rbegin(); a != axes.rend(); ++a) {
    x = g.add_node("ReduceMean", {x}, {{"axes", std::vector<int64_t>{*a}}, {"keepdims", 1}}, op(l, what));
  }
  return x;
}

std::string layer_normalization(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const LayerNormalizationImpl&>(layer);
  std::vector<int64_t> axes;
  for (int64_t a : l.options.axis().axes) axes.push_back(keras_to_tensor_axis(l.input_shape(), a));
  std::sort(axes.begin(), axes.end());
  const auto rank = static_cast<int64_t>(l.input_shape().size()) + 1;
  const bool suffix = axes.back() == rank - 1 && axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (g.opset() >= 17 && suffix && l.gamma.defined()) {
    // One LayerNormalization node over axes [a, rank): scale/bias shaped as those axes.
    auto normalized = [&](const at::Tensor& p) {
      const at::Tensor v = layer_norm_param(l, p);
      return v.reshape(v.sizes().slice(static_cast<size_t>(axes.front())));
    };
    Inputs ins{in[0], g.add_initializer(op(l, "gamma"), normalized(l.gamma))};
    if (l.beta.defined()) ins.push_back(g.add_initializer(op(l, "beta"), normalized(l.beta)));
    return g.add_node("LayerNormalization", ins, {{"axis", axes.front()}, {"epsilon", l.options.epsilon()}},
                      op(l, "LayerNormalization"));
  }
  // Decomposed as layer_normalization.cpp computes it: (x − mean) / √(var + ε) · γ + β.
  const std::string mean = reduce_mean(l, g, in[0], axes, "mean");
  const std::string centred = g.add_node("Sub", {in[0], mean}, {}, op(l, "centred"));
  const std::string squared = g.add_node("Mul", {centred, centred}, {}, op(l, "squared"));
  const std::string var = reduce_mean(l, g, squared, axes, "variance");
  const std::string eps =
      g.add_node("Add", {var, g.add_scalar(op(l, "epsilon"), l.options.epsilon())}, {}, op(l, "var_eps"));
  const std::string std_dev = g.add_node("Sqrt", {eps}, {}, op(l, "std"));
  std::string y = g.add_node("Div", {centred, std_dev}, {}, op(l, "normalized"));
  if (l.gamma.defined())
    y = g.add_node("Mul", {y, g.add_initializer(op(l, "gamma"), layer_norm_param(l, l.gamma))}, {}, op(l, "scaled"));
  if (l.beta.defined())
    y = g.add_node("Add", {y, g.add_initializer(op(l, "beta"), layer_norm_param(l, l.beta))}, {}, op(l, "shifted"));
  return y;
}

// Add, Multiply, Maximum, Minimum: the binary op applied left to right, as merge.cpp.
Exporter chain(const std::string& onnx_op) {
  return [onnx_op](const Layer& l, OnnxGraph& g, const Inputs& in) {
    std::string y = g.add_node(onnx_op, {in[0], in[1]}, {}, op(l, onnx_op));
    for (size_t i = 2; i < in.size(); ++i) y = g.add_node(onnx_op, {y, in[i]}, {}, op(l, onnx_op));
    return y;
  };
}

std::string average(const Layer& l, OnnxGraph& g, const Inputs& in) {
  const std::string sum = chain("Add")(l, g, in);
  return g.add_node("Div", {sum, g.add_scalar(op(l, "count"), static_cast<float>(in.size()))}, {}, op(l, "Div"));
}

std::string concatenate(const Layer& layer, OnnxGraph& g, const Inputs& in) {
  const auto& l = dynamic_cast<const ConcatenateImpl&>(layer);
  const int64_t axis = keras_to_tensor_axis(l.input_shapes()[0], l.options.axis());  // as merge.cpp
  return g.add_node("Concat", in, {{"axis", axis}}, op(l, "Concat"));
}

const std::map<std::string, Exporter>& exporters() {
  static const std::map<std::string, Exporter> table = {
      {"Activation", activation},
      {"Add", chain("Add")},
      {"Average", average},
      {"AveragePooling2D", pooling},
      {"BatchNormalization", batch_normalization},
      {"Concatenate", concatenate},
      {"Conv2D", conv2d},
      {"Conv2DTranspose", conv2d_transpose},
      {"Cropping2D", cropping2d},
      {"Dense", dense},
      {"DepthwiseConv2D", depthwise_conv2d},
      {"Dropout", [](const Layer&, OnnxGraph&, const Inputs& in) { return in[0]; }},  // identity at inference
      {"ELU", elu},
      {"Flatten", flatten},
      {"GlobalAveragePooling2D", global_pooling},
      {"GlobalMaxPooling2D", global_pooling},
      {"LayerNormalization", layer_normalization},
      {"LeakyReLU", leaky_relu},
      {"MaxPooling2D", pooling},
      {"Maximum", chain("Max")},
      {"Minimum", chain("Min")},
      {"Multiply", chain("Mul")},
      {"ReLU", relu},
      {"Rescaling", rescaling},
      {"Reshape", reshape},
      {"SeparableConv2D", separable_conv2d},
      {"Softmax", softmax},
      {"Subtract",
       [](const Layer& l, OnnxGraph& g, const Inputs& in) {
         return g.add_node("Sub", {in[0], in[1]}, {}, op(l, "Sub"));
       }},
      {"UpSampling2D", up_sampling2d},
      {"ZeroPadding2D", zero_padding2d},
  };
  return table;
}

}  // namespace

std::string export_builtin_layer(const Layer& layer, OnnxGraph& graph, const Inputs& inputs) {
  const auto it = exporters().find(layer.class_name());
  if (it == exporters().end()) return {};
  if (!layer.built())
    throw ConfigError("ONNX export: layer '" + layer.name() + "' (" + layer.class_name() + ") is not built");
  try {
    return it->second(layer, graph, inputs);
  } catch (const std::bad_cast&) {
    return {};  // a class of another library under a built-in name: its own hook decides
  }
}

std::vector<std::string> onnx_builtin_classes() {
  std::vector<std::string> names;
  for (const auto& [name, exporter] : exporters()) names.push_back(name);
  return names;
}

}  // namespace torchfit::saving::detail
