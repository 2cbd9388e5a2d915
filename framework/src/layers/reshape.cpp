#include <torchfit/layers/reshape.h>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

ReshapeImpl::ReshapeImpl(ReshapeOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const auto& t = options.target_shape();
  int unknown = 0;
  for (auto d : t) {
    if (d == -1) ++unknown;
    if (d == 0 || d < -1) unknown = 99;
  }
  if (t.empty() || unknown > 1) {
    throw ConfigError(describe() + ": target_shape " + format_shape(t) +
                      " must be non-empty with positive entries and at most one -1");
  }
}

Shape ReshapeImpl::build_impl(const Shape& in) {
  Shape out = options.target_shape();
  const int64_t n = shape_numel(in);
  int64_t known = 1;
  int64_t* unknown = nullptr;
  for (auto& d : out) {
    if (d == -1)
      unknown = &d;
    else
      known *= d;
  }
  if (unknown && n % known == 0) *unknown = n / known;
  if (shape_numel(out) != n) {
    throw ConfigError(describe() + ": cannot reshape input " + format_shape(in) + " (" + std::to_string(n) +
                      " values) to target_shape " + format_shape(options.target_shape()));
  }
  channels_last_target_ = out;
  channels_last_target_.insert(channels_last_target_.begin(), -1);
  return out;
}

at::Tensor ReshapeImpl::forward(const at::Tensor& x) {
  at::Tensor h = x.dim() == 4 ? x.permute({0, 2, 3, 1}) : x;  // (N, C, H, W) → Keras (N, H, W, C)
  h = h.reshape(channels_last_target_);
  if (h.dim() == 4) h = h.permute({0, 3, 1, 2}).contiguous();  // Keras (N, H, W, C) → (N, C, H, W)
  return h;
}

nlohmann::json ReshapeImpl::config() const { return base_config(options); }

std::string ReshapeImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  // As forward(): Keras's reshape acts on the (N, H, W, C) order.
  using detail::onnx_name;
  std::string x = in[0];
  if (input_shape().size() == 3) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}},
                   onnx_name(*this, "to_channels_last"));
  }
  std::vector<int64_t> target{-1};
  for (int64_t d : output_shape()) target.push_back(d);
  x = g.add_node("Reshape", {x, g.add_int64s(onnx_name(*this, "shape"), target)}, {}, onnx_name(*this, "Reshape"));
  if (output_shape().size() == 3) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}},
                   onnx_name(*this, "to_channels_first"));
  }
  return x;
}

TORCHFIT_REGISTER_LAYER(Reshape);

}  // namespace torchfit
