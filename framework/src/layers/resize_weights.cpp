// tf.image.resize's one-axis weights (resize_weights.h), written from TensorFlow's kernels
// (tensorflow/core/kernels/image/resize_bicubic_op.cc, resize_area_op.cc, scale_and_translate_op.cc,
// sampling_kernels.h): positions in float32 as TensorFlow, weights in float64.
#include "layers/resize_weights.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

namespace torchfit::detail {

namespace {

using Row = std::vector<double>;

// TensorFlow renormalises a span whose weights sum to at least 1000·FLT_MIN (else the row stays 0).
void renormalise(Row& row) {
  double sum = 0;
  for (double w : row) sum += w;
  if (std::abs(sum) < 1000.0 * static_cast<double>(std::numeric_limits<float>::min())) {
    std::fill(row.begin(), row.end(), 0.0);
    return;
  }
  for (double& w : row) w /= sum;
}

at::Tensor to_matrix(const std::vector<Row>& rows, int64_t in) {
  at::Tensor m = at::zeros({static_cast<int64_t>(rows.size()), in}, at::kDouble);
  auto a = m.accessor<double, 2>();
  for (size_t o = 0; o < rows.size(); ++o) {
    for (int64_t i = 0; i < in; ++i) a[static_cast<int64_t>(o)][i] = rows[o][static_cast<size_t>(i)];
  }
  return m;
}

// ResizeBicubic's table (InitCoeffsTable, a = −0.5): entry i holds the weights at distance i/1024 (the
// near taps) and 1 + i/1024 (the far ones).
double keys_table(int64_t i, bool far) {
  constexpr double a = -0.5;
  double x = static_cast<double>(i) / 1024.0;
  if (!far) return ((a + 2) * x - (a + 3)) * x * x + 1;
  x += 1.0;
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

// ResizeBicubic with half_pixel_centers (GetWeightsAndIndices<HalfPixelScaler, true>): taps in_loc − 1 …
// in_loc + 2 from the table at offset lrintf(delta · 1024); taps outside the image weigh 0, the rest are
// renormalised.
at::Tensor bicubic(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  std::vector<Row> rows(static_cast<size_t>(out), Row(static_cast<size_t>(in), 0.0));
  for (int64_t o = 0; o < out; ++o) {
    const float in_loc_f = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const auto in_loc = static_cast<int64_t>(std::floor(in_loc_f));
    const float delta = in_loc_f - static_cast<float>(in_loc);
    const int64_t offset = std::lrint(delta * 1024.0f);
    const double w[4] = {keys_table(offset, true), keys_table(offset, false), keys_table(1024 - offset, false),
                         keys_table(1024 - offset, true)};
    Row& row = rows[static_cast<size_t>(o)];
    for (int64_t k = 0; k < 4; ++k) {
      const int64_t tap = in_loc - 1 + k;
      if (tap >= 0 && tap < in) row[static_cast<size_t>(tap)] += w[k];
    }
    renormalise(row);
  }
  return to_matrix(rows, in);
}

// ResizeArea (align_corners false): output o covers [o·s, (o + 1)·s) of the input, s = in / out; each
// input cell weighs its covered fraction, times 1/s. Cells past the edge are Bound to the last one.
at::Tensor area(int64_t in, int64_t out) {
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  const double inv = 1.0 / static_cast<double>(scale);
  std::vector<Row> rows(static_cast<size_t>(out), Row(static_cast<size_t>(in), 0.0));
  for (int64_t o = 0; o < out; ++o) {
    const float in_y = static_cast<float>(o) * scale, in_y1 = static_cast<float>(o + 1) * scale;
    const auto start = static_cast<int64_t>(std::floor(in_y)), end = static_cast<int64_t>(std::ceil(in_y1));
    for (int64_t i = start; i < end; ++i) {
      const auto fi = static_cast<float>(i);
      float cover;
      if (fi < in_y) {
        cover = fi + 1 > in_y1 ? scale : fi + 1 - in_y;
      } else {
        cover = fi + 1 > in_y1 ? in_y1 - fi : 1.0f;
      }
      const int64_t cell = std::min(in - 1, std::max<int64_t>(0, i));
      rows[static_cast<size_t>(o)][static_cast<size_t>(cell)] += static_cast<double>(cover) * inv;
    }
  }
  return to_matrix(rows, in);
}

struct SamplingKernel {
  double radius;
  std::function<double(double)> at;  // of |x|
};

double lanczos(double x, double radius) {
  constexpr double kPi = 3.14159265359;  // sampling_kernels.h's constant
  if (x > radius) return 0.0;
  if (x <= 1e-3) return 1.0;
  return radius * std::sin(kPi * x) * std::sin(kPi * x / radius) / (kPi * kPi * x * x);
}

SamplingKernel sampling_kernel(const std::string& name) {
  if (name == "triangle") return {1.0, [](double x) { return x < 1.0 ? 1.0 - x : 0.0; }};
  if (name == "keyscubic") {
    return {2.0, [](double x) {
              if (x >= 2.0) return 0.0;
              if (x >= 1.0) return ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0;
              return ((1.5 * x - 2.5) * x) * x + 1.0;
            }};
  }
  if (name == "mitchellcubic") {
    return {2.0, [](double x) {
              if (x >= 2.0) return 0.0;
              if (x >= 1.0) return (((-7.0 / 18.0) * x + 2.0) * x - 10.0 / 3.0) * x + 16.0 / 9.0;
              return (((7.0 / 6.0) * x - 2.0) * x) * x + 8.0 / 9.0;
            }};
  }
  if (name == "lanczos3") return {3.0, [](double x) { return lanczos(x, 3.0); }};
  if (name == "lanczos5") return {5.0, [](double x) { return lanczos(x, 5.0); }};
  if (name == "gaussian") {  // radius 1.5, sigma = radius / 3
    return {1.5, [](double x) { return x >= 1.5 ? 0.0 : std::exp(-x * x / (2.0 * 0.5 * 0.5)); }};
  }
  throw std::invalid_argument("resize_axis_weights: unknown sampling kernel '" + name + "'");
}

// ScaleAndTranslate's ComputeSpansCore with translate 0: output o samples at (o + 0.5)/scale, the taps
// whose centres lie within radius·kernel_scale, clamped to the image, weighted kernel(|pos| / kernel_scale)
// and renormalised.
at::Tensor scale_and_translate(int64_t in, int64_t out, const std::string& kernel_name, bool antialias) {
  const SamplingKernel kernel = sampling_kernel(kernel_name);
  const float scale = static_cast<float>(out) / static_cast<float>(in);
  const auto inv_scale = static_cast<float>(1.0 / static_cast<double>(scale));
  const float kernel_scale = antialias ? std::max(inv_scale, 1.0f) : 1.0f;
  const auto reach = static_cast<float>(kernel.radius) * kernel_scale;
  std::vector<Row> rows(static_cast<size_t>(out), Row(static_cast<size_t>(in), 0.0));
  for (int64_t o = 0; o < out; ++o) {
    const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
    if (sample < 0 || sample > static_cast<float>(in)) continue;
    const int64_t first = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(sample - reach - 0.5f)), 0, in - 1);
    const int64_t last = std::clamp<int64_t>(static_cast<int64_t>(std::floor(sample + reach - 0.5f)), 0, in - 1);
    Row& row = rows[static_cast<size_t>(o)];
    for (int64_t s = first; s <= last; ++s) {
      const float pos = static_cast<float>(s) + 0.5f - sample;
      row[static_cast<size_t>(s)] = kernel.at(std::abs(static_cast<double>(pos) / static_cast<double>(kernel_scale)));
    }
    renormalise(row);
  }
  return to_matrix(rows, in);
}

}  // namespace

const std::vector<std::string>& resize_interpolations() {
  static const std::vector<std::string> names = {"bilinear", "nearest",  "bicubic",  "area",
                                                 "lanczos3", "lanczos5", "gaussian", "mitchellcubic"};
  return names;
}

bool resize_uses_weights(const std::string& method, bool antialias) {
  return method != "nearest" && (method != "bilinear" || antialias);
}

at::Tensor resize_axis_weights(int64_t in, int64_t out, const std::string& method, bool antialias) {
  if (in < 1 || out < 1) {
    throw std::invalid_argument("resize_axis_weights: sizes must be >= 1, got " + std::to_string(in) + " -> " +
                                std::to_string(out));
  }
  if (method == "area") return area(in, out);
  if (method == "bicubic") return antialias ? scale_and_translate(in, out, "keyscubic", true) : bicubic(in, out);
  if (method == "bilinear" && antialias) return scale_and_translate(in, out, "triangle", true);
  if (method == "lanczos3" || method == "lanczos5" || method == "gaussian" || method == "mitchellcubic") {
    return scale_and_translate(in, out, method, antialias);
  }
  throw std::invalid_argument("resize_axis_weights: no weights for interpolation '" + method + "'");
}

}  // namespace torchfit::detail
