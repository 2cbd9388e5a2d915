#include <torchfit/layers/global_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {
namespace {
void check_image_input(const Shape& in, const std::string& who) {
  if (in.size() != 3) throw ConfigError(who + " expects a 3-D input (H, W, C), got " + format_shape(in));
}
}  // namespace

GlobalAveragePooling2DImpl::GlobalAveragePooling2DImpl(GlobalPooling2DOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

Shape GlobalAveragePooling2DImpl::build_impl(const Shape& in) {
  check_image_input(in, describe());
  return {in[2]};
}

at::Tensor GlobalAveragePooling2DImpl::forward(const at::Tensor& x) { return x.mean({2, 3}); }

nlohmann::json GlobalAveragePooling2DImpl::config() const { return base_config(options); }

GlobalMaxPooling2DImpl::GlobalMaxPooling2DImpl(GlobalPooling2DOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
}

Shape GlobalMaxPooling2DImpl::build_impl(const Shape& in) {
  check_image_input(in, describe());
  return {in[2]};
}

at::Tensor GlobalMaxPooling2DImpl::forward(const at::Tensor& x) { return x.amax({2, 3}); }

nlohmann::json GlobalMaxPooling2DImpl::config() const { return base_config(options); }

TORCHFIT_REGISTER_LAYER(GlobalAveragePooling2D);
namespace {
// GlobalAveragePool / GlobalMaxPool (N, C, 1, 1) → Flatten (N, C).
std::string onnx_global_pooling(const Layer& l, io::OnnxGraph& g, const std::string& x, const std::string& kind) {
  const std::string y = g.add_node(kind, {x}, {}, detail::onnx_name(l, kind));
  return g.add_node("Flatten", {y}, {{"axis", 1}}, detail::onnx_name(l, "Flatten"));
}
}  // namespace

std::string GlobalAveragePooling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_global_pooling(*this, g, in[0], "GlobalAveragePool");
}

std::string GlobalMaxPooling2DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_global_pooling(*this, g, in[0], "GlobalMaxPool");
}

TORCHFIT_REGISTER_LAYER(GlobalMaxPooling2D);

}  // namespace torchfit
