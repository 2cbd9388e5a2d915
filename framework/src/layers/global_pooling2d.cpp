#include <torchfit/layers/global_pooling2d.h>

#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

GlobalPooling::GlobalPooling(const char* class_name, GlobalPoolingOptions opts, int spatial_rank, bool max)
    : Layer(class_name, opts.name()), options(std::move(opts)), spatial_rank_(spatial_rank), max_(max) {
  set_declared_input_shape(options.input_shape());
}

Shape GlobalPooling::build_impl(const Shape& in) {
  detail::expect_spatial_rank(describe(), in, spatial_rank_);
  Shape out(options.keepdims() ? spatial_rank_ : 0, 1);
  out.push_back(in.back());  // the channels
  return out;
}

// The tensor dims of the pooled axes: (N, C, H, W): 2, 3; (N, steps, C): 1; (N, D, H, W, C): 1, 2, 3.
std::vector<int64_t> GlobalPooling::pooled_dims() const {
  std::vector<int64_t> dims;
  for (int i = 0; i < spatial_rank_; ++i) dims.push_back(spatial_tensor_dim(spatial_rank_) + i);
  return dims;
}

at::Tensor GlobalPooling::forward(const at::Tensor& x) {
  return max_ ? x.amax(pooled_dims(), options.keepdims()) : x.mean(pooled_dims(), options.keepdims());
}

// keras/src/layers/pooling/global_average_pooling1d.py: where(mask, x, 0) summed over the steps / Σ mask.
at::Tensor GlobalPooling::forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) {
  const at::Tensor& x = inputs.at(0);
  if (!supports_masking() || !masks.at(0).defined()) return forward(x);
  const at::Tensor& m = masks[0];
  if (m.dim() != 2 || x.dim() != 3 || m.size(0) != x.size(0) || m.size(1) != x.size(1)) {
    throw ConfigError(describe() + ": its mask must be (N, steps) = " + format_sizes({x.size(0), x.size(1)}) +
                      ", got " + format_sizes(m.sizes().vec()));
  }
  const at::Tensor keep = m.to(x.device(), at::kBool).unsqueeze(2);
  const at::Tensor sum = at::where(keep, x, at::zeros({}, x.options())).sum(1, options.keepdims());
  return sum / keep.to(x.scalar_type()).sum(1, options.keepdims());
}

std::string GlobalPooling::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  if (spatial_rank_ == 1) {
    const char* op = max_ ? "ReduceMax" : "ReduceMean";
    return g.add_node(op, {in[0]}, {{"axes", pooled_dims()}, {"keepdims", options.keepdims() ? 1 : 0}},
                      onnx_name(*this, op));
  }
  std::string x = in[0];
  const int64_t channels = input_shape().back();
  if (spatial_rank_ == 3) {
    // An (N, C, D·H·W, 1) image: OpenCV 4.6 pools no 5-D tensor globally and reduces its axes 1, 2, 3 wrongly.
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 4, 1, 2, 3}}},
                   onnx_name(*this, "to_channels_first"));
    x = g.add_node("Reshape", {x, g.add_int64s(onnx_name(*this, "image_shape"), {0, channels, -1, 1})}, {},
                   onnx_name(*this, "as_image"));
  }
  const char* op = max_ ? "GlobalMaxPool" : "GlobalAveragePool";
  const std::string y = g.add_node(op, {x}, {}, onnx_name(*this, op));  // (N, C, 1, 1)
  if (!options.keepdims()) return g.add_node("Flatten", {y}, {{"axis", 1}}, onnx_name(*this, "Flatten"));
  if (spatial_rank_ == 2) return y;
  return g.add_node("Reshape", {y, g.add_int64s(onnx_name(*this, "keepdims_shape"), {0, 1, 1, 1, channels})}, {},
                    onnx_name(*this, "keepdims"));
}

TORCHFIT_REGISTER_LAYER(GlobalAveragePooling2D);
TORCHFIT_REGISTER_LAYER(GlobalMaxPooling2D);
TORCHFIT_REGISTER_LAYER(GlobalAveragePooling1D);
TORCHFIT_REGISTER_LAYER(GlobalMaxPooling1D);
TORCHFIT_REGISTER_LAYER(GlobalAveragePooling3D);
TORCHFIT_REGISTER_LAYER(GlobalMaxPooling3D);

}  // namespace torchfit
