#include <torchfit/layers/global_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

GlobalPooling::GlobalPooling(const char* class_name, GlobalPoolingOptions opts, int spatial_rank, bool max)
    : Layer(class_name, opts.name()), options(std::move(opts)), spatial_rank_(spatial_rank), max_(max) {
  set_declared_input_shape(options.input_shape());
}

Shape GlobalPooling::build_impl(const Shape& in) {
  if (static_cast<int>(in.size()) != spatial_rank_ + 1) {
    throw ConfigError(describe() + " expects " +
                      (spatial_rank_ == 2 ? "a 3-D input (H, W, C)" : "a 2-D input (steps, C)") + ", got " +
                      format_shape(in));
  }
  const int64_t channels = in.back();
  if (!options.keepdims()) return {channels};
  return spatial_rank_ == 2 ? Shape{1, 1, channels} : Shape{1, channels};
}

at::Tensor GlobalPooling::forward(const at::Tensor& x) {
  // Images (N, C, H, W): over dims 2, 3; sequences (N, steps, C): over dim 1.
  const std::vector<int64_t> dims = spatial_rank_ == 2 ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1};
  return max_ ? x.amax(dims, options.keepdims()) : x.mean(dims, options.keepdims());
}

std::string GlobalPooling::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  if (spatial_rank_ == 1) {
    const char* op = max_ ? "ReduceMax" : "ReduceMean";
    return g.add_node(op, {in[0]}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", options.keepdims() ? 1 : 0}},
                      onnx_name(*this, op));
  }
  const char* op = max_ ? "GlobalMaxPool" : "GlobalAveragePool";
  const std::string y = g.add_node(op, {in[0]}, {}, onnx_name(*this, op));  // (N, C, 1, 1)
  return options.keepdims() ? y : g.add_node("Flatten", {y}, {{"axis", 1}}, onnx_name(*this, "Flatten"));
}

TORCHFIT_REGISTER_LAYER(GlobalAveragePooling2D);
TORCHFIT_REGISTER_LAYER(GlobalMaxPooling2D);
TORCHFIT_REGISTER_LAYER(GlobalAveragePooling1D);
TORCHFIT_REGISTER_LAYER(GlobalMaxPooling1D);

}  // namespace torchfit
