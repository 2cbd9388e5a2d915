#include <torchfit/layers/base_up_sampling.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

UpSamplingLayer::UpSamplingLayer(const char* class_name, const std::string& name, std::vector<int64_t> size)
    : Layer(class_name, name), size_(std::move(size)) {
  if (std::any_of(size_.begin(), size_.end(), [](int64_t s) { return s <= 0; })) {
    std::string text;
    for (const int64_t s : size_) text += (text.empty() ? "" : ", ") + std::to_string(s);
    throw ConfigError(describe() + ": size must be > 0, got " + (size_.size() == 1 ? text : "(" + text + ")"));
  }
}

Shape UpSamplingLayer::build_impl(const Shape& in) {
  detail::expect_spatial_rank(describe(), in, size_.size());
  Shape out = in;
  for (size_t i = 0; i < size_.size(); ++i) out[i] *= size_[i];
  return out;
}

at::Tensor UpSamplingLayer::forward(const at::Tensor& x) {
  // Exact repeats (no floating-point source index): each spatial dim d split into (d, 1), expanded to (d, s).
  const int64_t first = spatial_tensor_dim(size_.size());
  std::vector<int64_t> split, expanded, out;
  for (int64_t d = 0; d < x.dim(); ++d) {
    split.push_back(x.size(d));
    expanded.push_back(x.size(d));
    out.push_back(x.size(d));
    const int64_t i = d - first;
    if (i >= 0 && i < static_cast<int64_t>(size_.size())) {
      split.push_back(1);
      expanded.push_back(size_[i]);
      out.back() *= size_[i];
    }
  }
  return x.reshape(split).expand(expanded).reshape(out);
}

std::string UpSamplingLayer::resize_node(io::OnnxGraph& g, const std::string& x, const std::vector<float>& scales,
                                         std::vector<io::OnnxAttribute> attributes, const std::string& what) const {
  const std::string s = g.add_initializer(detail::onnx_name(*this, what + "_scales"), at::tensor(scales));
  return g.add_node("Resize", {x, "", s}, attributes, detail::onnx_name(*this, what));
}

std::string UpSamplingLayer::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  // Each value repeated: source = floor(i / s).
  const std::vector<io::OnnxAttribute> nearest{
      {"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", "floor"}};
  const auto f = [this](size_t i) { return static_cast<float>(size_[i]); };
  const Shape& i = input_shape();
  if (size_.size() == 2) return resize_node(g, in[0], {1.0f, 1.0f, f(0), f(1)}, nearest, "Resize");
  // OpenCV 4.6 resizes only (N, C, H, W): a sequence as an (N, C, 1, steps) image, as Conv1D.
  if (size_.size() == 1) {
    const std::string image = detail::onnx_sequence_as_image(*this, g, in[0], i[1]);
    const std::string y = resize_node(g, image, {1.0f, 1.0f, 1.0f, f(0)}, nearest, "Resize");
    return detail::onnx_image_as_sequence(*this, g, y, i[1]);
  }
  // A volume: channels first, (C·D, H, W) resized over H, W, then (C, D, H'·W') over D, then back.
  const int64_t c = i[3], d = i[0], h = i[1] * size_[1], w = i[2] * size_[2];
  const auto reshape = [&](const std::string& x, std::vector<int64_t> shape, const std::string& what) {
    return g.add_node("Reshape", {x, g.add_int64s(onnx_name(*this, what + "_shape"), shape)}, {},
                      onnx_name(*this, what));
  };
  std::string x = g.add_node("Transpose", {in[0]}, {{"perm", std::vector<int64_t>{0, 4, 1, 2, 3}}},
                             onnx_name(*this, "to_channels_first"));
  x = reshape(x, {0, c * d, i[1], i[2]}, "as_image");
  x = resize_node(g, x, {1.0f, 1.0f, f(1), f(2)}, nearest, "Resize_rows_cols");
  x = reshape(x, {0, c, d, h * w}, "as_depth_image");
  x = resize_node(g, x, {1.0f, 1.0f, f(0), 1.0f}, nearest, "Resize_depth");
  x = reshape(x, {0, c, d * size_[0], h, w}, "as_volume");
  return g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 4, 1}}},
                    onnx_name(*this, "to_channels_last"));
}

}  // namespace torchfit
