#pragma once
// ONNX exporters of torchfit's built-in layers (used by saving/onnx.cpp).
#include <string>
#include <vector>

#include <torchfit/layers/layer.h>
#include <torchfit/saving/onnx.h>

namespace torchfit::saving::detail {

/// Appends the nodes of built-in `layer` reading `inputs` to `graph`; returns the output's name, or ""
/// when `layer` is not one of torchfit's own classes. Errors: ConfigError naming the layer for an
/// option ONNX cannot express.
std::string export_builtin_layer(const Layer& layer, OnnxGraph& graph, const std::vector<std::string>& inputs);

/// The Keras layer classes export_builtin_layer writes, sorted.
std::vector<std::string> onnx_builtin_classes();

}  // namespace torchfit::saving::detail
