#include <torchfit/layers/resizing.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

ResizingImpl::ResizingImpl(ResizingOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.height() <= 0 || options.width() <= 0) {
    throw ConfigError(describe() + ": height and width must be > 0, got " + std::to_string(options.height()) + " and " +
                      std::to_string(options.width()));
  }
  const std::string& mode = options.interpolation();
  if (mode != "bilinear" && mode != "nearest") {
    throw ConfigError(describe() + ": interpolation must be 'bilinear' or 'nearest', got '" + mode + "'");
  }
  if (options.crop_to_aspect_ratio() && options.pad_to_aspect_ratio()) {
    throw ConfigError(describe() + ": crop_to_aspect_ratio and pad_to_aspect_ratio cannot both be true");
  }
  if (options.fill_mode() != "constant") {
    throw ConfigError(describe() + ": fill_mode must be 'constant', got '" + options.fill_mode() + "'");
  }
  if (options.antialias()) throw ConfigError(describe() + ": antialias=true is not supported (false only)");
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
  if (options.interpolation() == "nearest") return at::_upsample_nearest_exact2d(y, size);
  return at::upsample_bilinear2d(y, size, /*align_corners=*/false);
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
