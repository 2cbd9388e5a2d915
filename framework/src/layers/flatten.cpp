#include <torchfit/layers/flatten.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

FlattenImpl::FlattenImpl(FlattenOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const std::string& order = options.element_order();
  if (order != "channels_last" && order != "channels_first") {
    throw ConfigError(describe() + ": element_order \"" + order + "\" is not channels_last or channels_first");
  }
}

Shape FlattenImpl::build_impl(const Shape& in) { return {shape_numel(in)}; }

// (N, C, H, W) → (N, H, W, C) → (N, H·W·C): Keras's order (keras.layers.Flatten on a channels-last tensor).
at::Tensor FlattenImpl::forward(const at::Tensor& x) {
  if (x.dim() == 4 && flattens_channels_last()) return x.permute({0, 2, 3, 1}).reshape({x.size(0), -1});
  return x.flatten(1);
}

// Keras's own config ({"name", "trainable"}); element_order only when it is not Keras's order.
nlohmann::json FlattenImpl::config() const {
  nlohmann::json c = base_config(options);
  if (flattens_channels_last()) c.erase("element_order");
  return c;
}

std::string FlattenImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  // As forward(): an image is flattened in Keras's (H, W, C) order unless the layer keeps (C, H, W).
  std::string x = in[0];
  if (input_shape().size() == 3 && flattens_channels_last()) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}},
                   detail::onnx_name(*this, "to_channels_last"));
  }
  return g.add_node("Flatten", {x}, {{"axis", 1}}, detail::onnx_name(*this, "Flatten"));
}

TORCHFIT_REGISTER_LAYER(Flatten);

}  // namespace torchfit
