// ImageDataGenerator: Keras's random transform draws and one affine resample per image (scipy's rules,
// data/affine_resample.h).
#include "data/affine_resample.h"

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace torchfit::data {

namespace {

constexpr double kPi = 3.14159265358979323846;

void require_non_negative(double v, const char* name) {
  if (!(v >= 0))
    throw ConfigError(std::string("ImageDataGenerator: ") + name + " must be >= 0, got " + std::to_string(v));
}

// 3×3 product a·b of row-major affine matrices stored as 3×3.
using M3 = std::array<double, 9>;
M3 mul(const M3& a, const M3& b) {
  M3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) r[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
  return r;
}

}  // namespace

ImageDataGeneratorOptions article_augmentation() {
  return ImageDataGeneratorOptions()
      .rescale(1.0 / 255)
      .shear_range(0.2)
      .zoom_range(0.2)
      .rotation_range(20)
      .horizontal_flip(true);
}

namespace {
std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}
}  // namespace

std::string options_text(const ImageDataGeneratorOptions& o) {
  const ImageDataGeneratorOptions d;
  std::string text;
  const auto add = [&text](const std::string& item) { text += (text.empty() ? "" : " ") + item; };
  const std::pair<const char*, std::pair<double, double>> numbers[] = {
      {"rescale", {o.rescale(), d.rescale()}},
      {"rotation_range", {o.rotation_range(), d.rotation_range()}},
      {"width_shift_range", {o.width_shift_range(), d.width_shift_range()}},
      {"height_shift_range", {o.height_shift_range(), d.height_shift_range()}},
      {"shear_range", {o.shear_range(), d.shear_range()}},
      {"channel_shift_range", {o.channel_shift_range(), d.channel_shift_range()}},
      {"cval", {o.cval(), d.cval()}},
      {"validation_split", {o.validation_split(), d.validation_split()}}};
  for (const auto& [name, v] : numbers) {
    if (v.first != v.second) add(std::string(name) + "=" + number_text(v.first));
  }
  if (o.zoom_range() != d.zoom_range()) {
    add("zoom_range=[" + number_text(o.zoom_range()[0]) + ", " + number_text(o.zoom_range()[1]) + "]");
  }
  if (o.brightness_range()) {
    add("brightness_range=[" + number_text((*o.brightness_range())[0]) + ", " +
        number_text((*o.brightness_range())[1]) + "]");
  }
  if (o.horizontal_flip()) add("horizontal_flip=true");
  if (o.vertical_flip()) add("vertical_flip=true");
  if (o.fill_mode() != d.fill_mode()) add("fill_mode=" + o.fill_mode());
  if (o.interpolation_order() != d.interpolation_order())
    add("interpolation_order=" + std::to_string(o.interpolation_order()));
  if (o.samplewise_center()) add("samplewise_center=true");
  if (o.samplewise_std_normalization()) add("samplewise_std_normalization=true");
  if (o.preprocessing_function()) add("preprocessing_function=set");
  return text.empty() ? "none" : text;
}

nlohmann::json preprocessing_config(const ImageDataGeneratorOptions& o) {
  return {{"rescale", o.rescale()},
          {"samplewise_center", o.samplewise_center()},
          {"samplewise_std_normalization", o.samplewise_std_normalization()}};
}

ImageDataGeneratorOptions preprocessing_from_config(const nlohmann::json& config) {
  ImageDataGeneratorOptions o;
  if (config.is_null()) return o;
  if (!config.is_object()) throw ConfigError("preprocessing: expected an object, got " + config.dump());
  const auto flag = [&config](const char* key) {
    if (!config.contains(key)) return false;
    if (!config[key].is_boolean()) throw ConfigError(std::string("preprocessing: ") + key + " must be true or false");
    return config[key].get<bool>();
  };
  if (config.contains("rescale")) {
    const auto& r = config["rescale"];
    if (!r.is_number() || !std::isfinite(r.get<double>()) || r.get<double>() < 0)
      throw ConfigError("preprocessing: rescale must be a finite number >= 0, got " + r.dump());
    o.rescale(r.get<double>());
  }
  return o.samplewise_center(flag("samplewise_center"))
      .samplewise_std_normalization(flag("samplewise_std_normalization"));
}

ImageDataGenerator::ImageDataGenerator(ImageDataGeneratorOptions options) : options_(std::move(options)) {
  const auto& o = options_;
  require_non_negative(o.rotation_range(), "rotation_range");
  require_non_negative(o.width_shift_range(), "width_shift_range");
  require_non_negative(o.height_shift_range(), "height_shift_range");
  require_non_negative(o.shear_range(), "shear_range");
  require_non_negative(o.channel_shift_range(), "channel_shift_range");
  const auto z = o.zoom_range();
  if (!(z[0] > 0) || !(z[1] >= z[0]))
    throw ConfigError("ImageDataGenerator: zoom_range must satisfy 0 < lo <= hi, got [" + std::to_string(z[0]) + ", " +
                      std::to_string(z[1]) + "]");
  if (o.brightness_range() && !((*o.brightness_range())[0] <= (*o.brightness_range())[1]))
    throw ConfigError("ImageDataGenerator: brightness_range must satisfy lo <= hi");
  if (!(o.validation_split() >= 0 && o.validation_split() < 1))
    throw ConfigError("ImageDataGenerator: validation_split must be in [0, 1), got " +
                      std::to_string(o.validation_split()));
  fill_mode_ = static_cast<int>(parse_fill_mode(o.fill_mode()));
  if (o.interpolation_order() != 0 && o.interpolation_order() != 1)
    throw ConfigError("ImageDataGenerator: interpolation_order must be 0 (nearest) or 1 (bilinear), got " +
                      std::to_string(o.interpolation_order()) + " (Keras's spline orders 2-5 are not implemented)");
  if (o.samplewise_std_normalization()) options_.samplewise_center(true);  // as Keras
}

bool ImageDataGenerator::augments() const {
  const auto& o = options_;
  return o.rotation_range() != 0 || o.width_shift_range() != 0 || o.height_shift_range() != 0 || o.shear_range() != 0 ||
         o.zoom_range()[0] != 1 || o.zoom_range()[1] != 1 || o.horizontal_flip() || o.vertical_flip() ||
         o.channel_shift_range() != 0 || o.brightness_range().has_value();
}

TransformParams ImageDataGenerator::get_random_transform(int height, int width, Rng& rng) const {
  const auto& o = options_;
  TransformParams p;
  if (o.rotation_range() != 0) p.theta = rng.uniform(-o.rotation_range(), o.rotation_range());
  if (o.height_shift_range() != 0) {
    p.tx = rng.uniform(-o.height_shift_range(), o.height_shift_range());
    if (o.height_shift_range() < 1) p.tx *= height;
  }
  if (o.width_shift_range() != 0) {
    p.ty = rng.uniform(-o.width_shift_range(), o.width_shift_range());
    if (o.width_shift_range() < 1) p.ty *= width;
  }
  if (o.shear_range() != 0) p.shear = rng.uniform(-o.shear_range(), o.shear_range());
  const auto z = o.zoom_range();
  if (!(z[0] == 1 && z[1] == 1)) {
    p.zx = rng.uniform(z[0], z[1]);
    p.zy = rng.uniform(z[0], z[1]);
  }
  // Keras draws both coins even when a flip is off; we draw only when enabled (each sample has its
  // own stream, so there is no shared state to keep in step).
  if (o.horizontal_flip()) p.flip_horizontal = rng.uniform() < 0.5;
  if (o.vertical_flip()) p.flip_vertical = rng.uniform() < 0.5;
  if (o.channel_shift_range() != 0)
    p.channel_shift_intensity = rng.uniform(-o.channel_shift_range(), o.channel_shift_range());
  if (o.brightness_range()) p.brightness = rng.uniform((*o.brightness_range())[0], (*o.brightness_range())[1]);
  return p;
}

std::array<double, 6> ImageDataGenerator::keras_affine_matrix(const TransformParams& p, int height, int width) {
  // Keras builds M = R·T·Sh·Z in (row, col) coordinates mapping output to input, centred with
  // o = size/2 + 0.5 (keras-preprocessing 1.1 transform_matrix_offset_center). Angles as np.deg2rad:
  // degrees · (π/180). The neutral factors Keras leaves out multiply exactly here (by 1 and ±0).
  const double th = p.theta * (kPi / 180.0), sh = p.shear * (kPi / 180.0);
  const M3 R{std::cos(th), -std::sin(th), 0, std::sin(th), std::cos(th), 0, 0, 0, 1};
  const M3 T{1, 0, p.tx, 0, 1, p.ty, 0, 0, 1};
  const M3 S{1, -std::sin(sh), 0, 0, std::cos(sh), 0, 0, 0, 1};
  const M3 Z{p.zx, 0, 0, 0, p.zy, 0, 0, 0, 1};
  const double ox = height / 2.0 + 0.5, oy = width / 2.0 + 0.5;
  const M3 off{1, 0, ox, 0, 1, oy, 0, 0, 1};
  const M3 reset{1, 0, -ox, 0, 1, -oy, 0, 0, 1};
  const M3 m = mul(mul(off, mul(mul(mul(R, T), S), Z)), reset);
  return {m[0], m[1], m[2], m[3], m[4], m[5]};
}

std::array<double, 6> ImageDataGenerator::affine_matrix(const TransformParams& p, int height, int width) {
  const auto k = keras_affine_matrix(p, height, width);
  M3 m{k[0], k[1], k[2], k[3], k[4], k[5], 0, 0, 1};
  // Flips happen after the resample in Keras; folding them in: final(r, c) = warped(r', c') with
  // c' = W−1−c (horizontal) and r' = H−1−r (vertical), i.e. M·F.
  if (p.flip_horizontal || p.flip_vertical) {
    M3 f{1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (p.flip_vertical) f[0] = -1, f[2] = height - 1;
    if (p.flip_horizontal) f[4] = -1, f[5] = width - 1;
    m = mul(m, f);
  }
  // (row, col) → OpenCV (x = col, y = row): swap both axes.
  return {m[4], m[3], m[5], m[1], m[0], m[2]};
}

namespace {

// Augments the (H, W, C) float image in `hwc`; returns a pointer to the result (hwc or scratch).
float* augment_hwc(float* hwc, int h, int w, int c, const TransformParams& p, FillMode mode,
                   const ImageDataGeneratorOptions& o, float* scratch) {
  float* cur = hwc;
  if (!p.affine_is_identity()) {  // Keras: scipy affine_transform(order=interpolation_order), then flip_axis
    affine_resample(hwc, h, w, c, ImageDataGenerator::keras_affine_matrix(p, h, w), p.flip_horizontal, p.flip_vertical,
                    mode, static_cast<float>(o.cval()), scratch, 1.f, o.interpolation_order());
    cur = scratch;
  } else if (p.flip_horizontal || p.flip_vertical) {
    const cv::Mat img(h, w, CV_32FC(c), hwc);
    cv::Mat dst(h, w, CV_32FC(c), scratch);
    cv::flip(img, dst, p.flip_horizontal && p.flip_vertical ? -1 : (p.flip_horizontal ? 1 : 0));
    cur = scratch;
  }
  const size_t n = static_cast<size_t>(h) * w * c;
  if (p.channel_shift_intensity) {
    float lo = cur[0], hi = cur[0];
    for (size_t i = 0; i < n; ++i) lo = std::min(lo, cur[i]), hi = std::max(hi, cur[i]);
    const float s = static_cast<float>(*p.channel_shift_intensity);
    for (size_t i = 0; i < n; ++i) cur[i] = std::min(hi, std::max(lo, cur[i] + s));
  }
  if (p.brightness) {
    const float b = static_cast<float>(*p.brightness);
    for (size_t i = 0; i < n; ++i) cur[i] = std::min(255.f, std::max(0.f, cur[i] * b));
  }
  return cur;
}

void hwc_to_chw(const float* hwc, int h, int w, int c, float* out) {
  const size_t plane = static_cast<size_t>(h) * w;
  if (c == 1) {
    std::memcpy(out, hwc, plane * sizeof(float));
    return;
  }
  cv::Mat src(h, w, CV_32FC(c), const_cast<float*>(hwc));
  std::vector<cv::Mat> planes;
  planes.reserve(static_cast<size_t>(c));
  for (int ch = 0; ch < c; ++ch) planes.emplace_back(h, w, CV_32F, out + ch * plane);
  cv::split(src, planes.data());
}

}  // namespace

at::Tensor ImageDataGenerator::standardize(at::Tensor image) const {
  const auto& o = options_;
  if (o.preprocessing_function()) {
    at::Tensor r = o.preprocessing_function()(image);
    if (!r.defined() || r.sizes() != image.sizes())
      throw ConfigError("preprocessing_function must return a tensor of shape " + std::to_string(image.size(0)) + "x" +
                        std::to_string(image.size(1)) + "x" + std::to_string(image.size(2)));
    if (r.data_ptr() != image.data_ptr()) image.copy_(r);
  }
  if (o.rescale() != 0) image.mul_(o.rescale());
  if (o.samplewise_center()) image.sub_(image.mean());
  if (o.samplewise_std_normalization()) image.div_(image.std(/*unbiased=*/false) + 1e-6);
  return image;
}

void ImageDataGenerator::transform_into(float* hwc, int height, int width, int channels, const TransformParams* p,
                                        float* out, float* scratch, int out_channels) const {
  if (out_channels == 0) out_channels = channels;
  if (out_channels != channels && !(channels == 1 && out_channels == 3))
    throw ConfigError("transform_into: cannot write a " + std::to_string(channels) + "-channel image as " +
                      std::to_string(out_channels) + " channels");
  const auto& o = options_;
  const size_t plane = static_cast<size_t>(height) * width;
  const bool standardize_all = o.preprocessing_function() || o.samplewise_center() || o.samplewise_std_normalization();
  const float s = (!standardize_all && o.rescale() != 0) ? static_cast<float>(o.rescale()) : 1.f;
  if (p && channels == 1 && !standardize_all && !p->affine_is_identity() && !p->channel_shift_intensity &&
      !p->brightness) {
    // The common gray case: the warp writes the rescaled plane straight into `out` (the same float
    // operations as warp, then multiply), which is then replicated.
    affine_resample(hwc, height, width, 1, keras_affine_matrix(*p, height, width), p->flip_horizontal, p->flip_vertical,
                    static_cast<FillMode>(fill_mode_), static_cast<float>(o.cval()), out, s, o.interpolation_order());
    for (int ch = 1; ch < out_channels; ++ch) std::memcpy(out + ch * plane, out, plane * sizeof(float));
    return;
  }
  const float* cur =
      p ? augment_hwc(hwc, height, width, channels, *p, static_cast<FillMode>(fill_mode_), options_, scratch) : hwc;
  if (channels == 1) {  // (H, W, 1) is already (1, H, W): scale (Keras rescale) and replicate in one pass
    const float* __restrict src = cur;
    float* __restrict r = out;
    for (size_t i = 0; i < plane; ++i) r[i] = src[i] * s;
    for (int ch = 1; ch < out_channels; ++ch) std::memcpy(out + ch * plane, out, plane * sizeof(float));
  } else {
    hwc_to_chw(cur, height, width, channels, out);
    if (s != 1.f) {  // the common case without ATen dispatch
      float* __restrict r = out;
      const size_t n = plane * static_cast<size_t>(channels);
      for (size_t i = 0; i < n; ++i) r[i] *= s;
    }
  }
  if (standardize_all) standardize(at::from_blob(out, {out_channels, height, width}, at::kFloat));
}

at::Tensor ImageDataGenerator::apply_transform(const at::Tensor& image, const TransformParams& p) const {
  if (image.dim() != 3)
    throw ConfigError("apply_transform expects a (C, H, W) image, got " + std::to_string(image.dim()) + " dims");
  const int c = static_cast<int>(image.size(0)), h = static_cast<int>(image.size(1)),
            w = static_cast<int>(image.size(2));
  // A fresh copy: augment_hwc works in place and the caller's image must stay untouched.
  at::Tensor hwc = image.to(at::kFloat).permute({1, 2, 0}).clone(at::MemoryFormat::Contiguous);
  std::vector<float> scratch(static_cast<size_t>(c) * h * w);
  const float* cur =
      augment_hwc(hwc.data_ptr<float>(), h, w, c, p, static_cast<FillMode>(fill_mode_), options_, scratch.data());
  at::Tensor out = at::empty({c, h, w}, at::kFloat);
  hwc_to_chw(cur, h, w, c, out.data_ptr<float>());
  return out;
}

std::unique_ptr<DirectoryIterator> ImageDataGenerator::flow_from_directory(const std::string& directory,
                                                                           const FlowOptions& flow) const {
  return std::make_unique<DirectoryIterator>(directory, flow, std::make_shared<const ImageDataGenerator>(*this));
}

}  // namespace torchfit::data
