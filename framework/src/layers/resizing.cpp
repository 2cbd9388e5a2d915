#include <torchfit/layers/resizing.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"
#include "layers/resize_weights.h"

namespace torchfit {

// Per (in, out, dtype, device): the weight matrix, shared by copies of the layer. Bounded: a dataset of many
// image sizes refills it.
struct ResizingImpl::WeightCache {
  std::mutex mutex;
  std::map<std::tuple<int64_t, int64_t, int, std::string>, at::Tensor> matrices;
};

ResizingImpl::ResizingImpl(ResizingOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)), cache_(std::make_shared<WeightCache>()) {
  set_declared_input_shape(options.input_shape());
  if (options.height() <= 0 || options.width() <= 0) {
    throw ConfigError(describe() + ": height and width must be > 0, got " + std::to_string(options.height()) + " and " +
                      std::to_string(options.width()));
  }
  const std::string& mode = options.interpolation();
  const std::vector<std::string>& modes = detail::resize_interpolations();
  if (std::find(modes.begin(), modes.end(), mode) == modes.end()) {
    std::string list;
    for (const std::string& m : modes) list += (list.empty() ? "'" : ", '") + m + "'";
    throw ConfigError(describe() + ": interpolation must be one of " + list + ", got '" + mode + "'");
  }
  if (options.crop_to_aspect_ratio() && options.pad_to_aspect_ratio()) {
    throw ConfigError(describe() + ": crop_to_aspect_ratio and pad_to_aspect_ratio cannot both be true");
  }
  if (options.fill_mode() != "constant") {
    throw ConfigError(describe() + ": fill_mode must be 'constant', got '" + options.fill_mode() + "'");
  }
}

Shape ResizingImpl::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  return {options.height(), options.width(), in[2]};
}

std::array<int64_t, 4> ResizingImpl::box(int64_t h, int64_t w) const {
  if (!options.crop_to_aspect_ratio() && !options.pad_to_aspect_ratio()) return {0, 0, h, w};
  // Keras 3's ops.image.resize: int(float(width * target_height) / target_width), as it computes them.
  const auto rows = static_cast<int64_t>(static_cast<double>(w * options.height()) / options.width());
  const auto cols = static_cast<int64_t>(static_cast<double>(h * options.width()) / options.height());
  if (options.crop_to_aspect_ratio()) {
    const int64_t bh = std::max<int64_t>(std::min(h, rows), 1), bw = std::max<int64_t>(std::min(w, cols), 1);
    return {(h - bh) / 2, (w - bw) / 2, bh, bw};
  }
  const int64_t bh = std::max(h, rows), bw = std::max(w, cols);
  return {(bh - h) / 2, (bw - w) / 2, bh, bw};  // the image's offset inside the padded box
}

at::Tensor ResizingImpl::forward(const at::Tensor& x) {
  const auto [top, left, rows, cols] = box(x.size(2), x.size(3));
  at::Tensor y = x;
  if (options.crop_to_aspect_ratio()) y = x.slice(2, top, top + rows).slice(3, left, left + cols);
  if (options.pad_to_aspect_ratio()) {
    y = at::constant_pad_nd(x, {left, cols - x.size(3) - left, top, rows - x.size(2) - top}, options.fill_value());
  }
  const std::vector<int64_t> size{options.height(), options.width()};
  if (!detail::resize_uses_weights(options.interpolation(), options.antialias())) {
    if (options.interpolation() == "nearest") return at::_upsample_nearest_exact2d(y, size);
    return at::upsample_bilinear2d(y, size, /*align_corners=*/false);
  }
  // Half precision on the CPU (no matmul there in LibTorch 1.13) and integers (TensorFlow gives float32)
  // are resized in float32; half precision goes back to its dtype.
  const at::ScalarType dtype = y.scalar_type();
  const bool half = dtype == at::kHalf || dtype == at::kBFloat16;
  if (!at::isFloatingType(dtype) || (half && !y.is_cuda())) y = y.to(at::kFloat);
  const at::Tensor wy = axis_weights(y.size(2), options.height(), y);
  const at::Tensor wx = axis_weights(y.size(3), options.width(), y);
  const at::Tensor out = at::matmul(wy, at::matmul(y, wx.t()));
  return half ? out.to(dtype) : out;
}

at::Tensor ResizingImpl::axis_weights(int64_t in, int64_t out, const at::Tensor& like) const {
  const auto key = std::make_tuple(in, out, static_cast<int>(like.scalar_type()), like.device().str());
  std::lock_guard<std::mutex> lock(cache_->mutex);
  auto it = cache_->matrices.find(key);
  if (it != cache_->matrices.end()) return it->second;
  if (cache_->matrices.size() >= 64) cache_->matrices.clear();
  at::Tensor w = detail::resize_axis_weights(in, out, options.interpolation(), options.antialias())
                     .to(like.device(), like.scalar_type());
  cache_->matrices.emplace(key, w);
  return w;
}

namespace {

// The smallest float32 scale s ≥ out / in: ONNX's output size floor(in · s) is then exactly `out`.
float onnx_scale(int64_t out, int64_t in) {
  auto s = static_cast<float>(static_cast<double>(out) / static_cast<double>(in));
  while (static_cast<double>(s) * static_cast<double>(in) < static_cast<double>(out)) {
    s = std::nextafter(s, std::numeric_limits<float>::infinity());
  }
  return s;
}

// TensorFlow's nearest source of each of `out` indices over `in`: min(floor((i + 0.5)·in/out), in − 1), in
// float32 as TensorFlow and LibTorch's nearest-exact compute it.
std::vector<int64_t> nearest_sources(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out; ++i) {
    idx.push_back(std::min(static_cast<int64_t>(std::floor((static_cast<float>(i) + 0.5f) * scale)), in - 1));
  }
  return idx;
}

}  // namespace

std::string ResizingImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const Shape& i = input_shape();
  const auto [top, left, rows, cols] = box(i[0], i[1]);
  std::string x = in[0];
  if (options.crop_to_aspect_ratio()) {
    x = g.add_node("Slice",
                   {x, g.add_int64s(onnx_name(*this, "starts"), {top, left}),
                    g.add_int64s(onnx_name(*this, "ends"), {top + rows, left + cols}),
                    g.add_int64s(onnx_name(*this, "axes"), {2, 3})},
                   {}, onnx_name(*this, "crop"));
  }
  if (options.pad_to_aspect_ratio()) {
    x = g.add_node(
        "Pad",
        {x, g.add_int64s(onnx_name(*this, "pads"), {0, 0, top, left, 0, 0, rows - i[0] - top, cols - i[1] - left}),
         g.add_initializer(onnx_name(*this, "fill_value"), at::scalar_tensor(options.fill_value(), at::kFloat))},
        {{"mode", "constant"}}, onnx_name(*this, "pad"));
  }
  if (detail::resize_uses_weights(options.interpolation(), options.antialias())) {
    const auto weights = [&](int64_t from, int64_t to) {
      return detail::resize_axis_weights(from, to, options.interpolation(), options.antialias()).to(at::kFloat);
    };
    // Rows first, as (N, C, W, H) · Wyᵀ between two Transposes (OpenCV 4.6 takes no constant first MatMul
    // input), then · Wxᵀ.
    const std::vector<int64_t> swap{0, 1, 3, 2};
    x = g.add_node("Transpose", {x}, {{"perm", swap}}, onnx_name(*this, "Transpose_in"));
    x = g.add_node("MatMul", {x, g.add_initializer(onnx_name(*this, "rows"), weights(rows, options.height()).t())}, {},
                   onnx_name(*this, "MatMul_rows"));
    x = g.add_node("Transpose", {x}, {{"perm", swap}}, onnx_name(*this, "Transpose_out"));
    return g.add_node("MatMul", {x, g.add_initializer(onnx_name(*this, "cols"), weights(cols, options.width()).t())},
                      {}, onnx_name(*this, "MatMul_cols"));
  }
  if (options.interpolation() == "nearest") {
    // TensorFlow's sources as Gathers of rows and columns: OpenCV 4.6 refuses Resize's tf_half_pixel_for_nn
    // and resizes nearest half_pixel with other sources.
    x = g.add_node("Gather", {x, g.add_int64s(onnx_name(*this, "rows"), nearest_sources(rows, options.height()))},
                   {{"axis", 2}}, onnx_name(*this, "Gather_rows"));
    return g.add_node("Gather", {x, g.add_int64s(onnx_name(*this, "cols"), nearest_sources(cols, options.width()))},
                      {{"axis", 3}}, onnx_name(*this, "Gather_cols"));
  }
  const std::string scales = g.add_initializer(
      onnx_name(*this, "scales"),
      at::tensor({1.0f, 1.0f, onnx_scale(options.height(), rows), onnx_scale(options.width(), cols)}));
  return g.add_node("Resize", {x, "", scales}, {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}},
                    onnx_name(*this, "Resize"));
}

TORCHFIT_REGISTER_LAYER(Resizing);

}  // namespace torchfit
