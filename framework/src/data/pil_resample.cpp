// Pillow-exact 8-bit resize (see pil_resample.h): coefficient tables, the two passes, and the alpha
// premultiplication Pillow applies to RGBA images.
#include "data/pil_resample.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace torchfit::data {

namespace {

constexpr double kPilPi = 3.14159265358979323846;
constexpr int kPilPrecisionBits = 32 - 8 - 2;  // Pillow's PRECISION_BITS: 22 fractional bits

double pil_sinc(double x) {
  if (x == 0.0) return 1.0;
  x *= kPilPi;
  return std::sin(x) / x;
}

// The filter kernels, as functions of the distance in (scaled) input pixels.
double pil_filter_value(PilFilter f, double x) {
  switch (f) {
    case PilFilter::box:
      return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
    case PilFilter::bilinear:
      x = std::abs(x);
      return x < 1.0 ? 1.0 - x : 0.0;
    case PilFilter::hamming:  // Pillow's constants are floats (0.54f, 0.46f)
      x = std::abs(x);
      if (x == 0.0) return 1.0;
      if (x >= 1.0) return 0.0;
      x *= kPilPi;
      return std::sin(x) / x * (static_cast<double>(0.54f) + static_cast<double>(0.46f) * std::cos(x));
    case PilFilter::bicubic: {
      constexpr double a = -0.5;
      x = std::abs(x);
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
      if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
      return 0.0;
    }
    case PilFilter::lanczos:
      return -3.0 <= x && x < 3.0 ? pil_sinc(x) * pil_sinc(x / 3) : 0.0;
  }
  return 0.0;
}

double pil_filter_support(PilFilter f) {
  switch (f) {
    case PilFilter::box:
      return 0.5;
    case PilFilter::bilinear:
    case PilFilter::hamming:
      return 1.0;
    case PilFilter::bicubic:
      return 2.0;
    case PilFilter::lanczos:
      return 3.0;
  }
  return 1.0;
}

// Per output pixel: the first input pixel, the number of taps and `ksize` fixed-point weights.
struct PilCoeffs {
  int ksize = 0;
  std::vector<int> first, count;
  std::vector<int32_t> k;  // out_size × ksize
};

// Weights of one output pixel, normalised to sum 1, then rounded half away from zero to fixed point.
void pil_pixel_weights(double center, double support, double ss, int first, int count, PilFilter f,
                       std::vector<double>& tmp, int32_t* k) {
  double sum = 0;
  for (int x = 0; x < count; ++x)
    sum += tmp[static_cast<size_t>(x)] = pil_filter_value(f, (x + first - center + 0.5) * ss);
  for (int x = 0; x < count; ++x) {
    double v = tmp[static_cast<size_t>(x)];
    if (sum != 0.0) v /= sum;
    const double scaled = v * (1 << kPilPrecisionBits);
    k[x] = static_cast<int32_t>(v < 0 ? -0.5 + scaled : 0.5 + scaled);
  }
}

PilCoeffs pil_coeffs(int in_size, int out_size, PilFilter f) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);  // widen the kernel when downscaling (antialias)
  const double support = pil_filter_support(f) * filterscale;
  PilCoeffs c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.first.resize(static_cast<size_t>(out_size));
  c.count.resize(static_cast<size_t>(out_size));
  c.k.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> tmp(static_cast<size_t>(c.ksize));
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const int first = std::max(static_cast<int>(center - support + 0.5), 0);  // truncation, as Pillow
    const int last = std::min(static_cast<int>(center + support + 0.5), in_size);
    const int count = std::max(last - first, 0);
    c.first[static_cast<size_t>(xx)] = first, c.count[static_cast<size_t>(xx)] = count;
    pil_pixel_weights(center, support, 1.0 / filterscale, first, count, f, tmp,
                      &c.k[static_cast<size_t>(xx) * c.ksize]);
  }
  return c;
}

// Pillow's clip8: ≥ 256·2^22 → 255, ≤ 0 → 0, else v >> 22; written branch-free (same values).
inline uint8_t pil_clip8(int32_t v) { return static_cast<uint8_t>(std::clamp(v >> kPilPrecisionBits, 0, 255)); }

// Horizontal pass over `rows` rows of `in` (width w): out has out_w columns.
template <int kC>
void pil_horizontal(const uint8_t* in, int w, int c, int rows, const PilCoeffs& k, int out_w, uint8_t* out) {
  const int n = kC > 0 ? kC : c;
  for (int y = 0; y < rows; ++y) {
    const uint8_t* src = in + static_cast<size_t>(y) * w * n;
    uint8_t* dst = out + static_cast<size_t>(y) * out_w * n;
    for (int xx = 0; xx < out_w; ++xx) {
      const int32_t* kk = &k.k[static_cast<size_t>(xx) * k.ksize];
      const uint8_t* s = src + static_cast<size_t>(k.first[static_cast<size_t>(xx)]) * n;
      const int count = k.count[static_cast<size_t>(xx)];
      int32_t acc[kC > 0 ? kC : 8];  // channels beyond 8 (never from a decoder) take the loop below
      if (kC == 0 && n > 8) {
        for (int ch = 0; ch < n; ++ch) {
          int32_t a = 1 << (kPilPrecisionBits - 1);
          for (int t = 0; t < count; ++t) a += s[t * n + ch] * kk[t];
          dst[xx * n + ch] = pil_clip8(a);
        }
        continue;
      }
      for (int ch = 0; ch < n; ++ch) acc[ch] = 1 << (kPilPrecisionBits - 1);
      for (int t = 0; t < count; ++t)
        for (int ch = 0; ch < n; ++ch) acc[ch] += s[t * n + ch] * kk[t];
      for (int ch = 0; ch < n; ++ch) dst[xx * n + ch] = pil_clip8(acc[ch]);
    }
  }
}

// Vertical pass: out row yy mixes rows first − row_offset … of `in` (row length `len` bytes).
void pil_vertical(const uint8_t* in, size_t len, const PilCoeffs& k, int row_offset, int out_h, uint8_t* out) {
  std::vector<int32_t> acc(len);
  for (int yy = 0; yy < out_h; ++yy) {
    std::fill(acc.begin(), acc.end(), 1 << (kPilPrecisionBits - 1));
    const int32_t* kk = &k.k[static_cast<size_t>(yy) * k.ksize];
    const uint8_t* rows = in + static_cast<size_t>(k.first[static_cast<size_t>(yy)] - row_offset) * len;
    for (int t = 0; t < k.count[static_cast<size_t>(yy)]; ++t) {
      const uint8_t* src = rows + static_cast<size_t>(t) * len;
      const int32_t kt = kk[t];
      for (size_t i = 0; i < len; ++i) acc[i] += src[i] * kt;
    }
    uint8_t* dst = out + static_cast<size_t>(yy) * len;
    for (size_t i = 0; i < len; ++i) dst[i] = pil_clip8(acc[i]);
  }
}

void pil_horizontal_any(const uint8_t* in, int w, int c, int rows, const PilCoeffs& k, int out_w, uint8_t* out) {
  if (c == 1)
    pil_horizontal<1>(in, w, c, rows, k, out_w, out);
  else if (c == 3)
    pil_horizontal<3>(in, w, c, rows, k, out_w, out);
  else if (c == 4)
    pil_horizontal<4>(in, w, c, rows, k, out_w, out);
  else
    pil_horizontal<0>(in, w, c, rows, k, out_w, out);
}

// Pillow's RGBA → RGBa: colour · alpha / 255, rounded as its MULDIV255.
void pil_premultiply(uint8_t* px, size_t pixels, int c) {
  for (size_t i = 0; i < pixels; ++i, px += c) {
    const uint32_t alpha = px[c - 1];
    for (int ch = 0; ch < c - 1; ++ch) {
      const uint32_t t = px[ch] * alpha + 128;
      px[ch] = static_cast<uint8_t>(((t >> 8) + t) >> 8);
    }
  }
}

// Pillow's RGBa → RGBA: colour · 255 / alpha (integer division, clipped), unchanged for alpha 0 or 255.
void pil_unpremultiply(uint8_t* px, size_t pixels, int c) {
  for (size_t i = 0; i < pixels; ++i, px += c) {
    const uint32_t alpha = px[c - 1];
    if (alpha == 0 || alpha == 255) continue;
    for (int ch = 0; ch < c - 1; ++ch) px[ch] = static_cast<uint8_t>(std::min<uint32_t>(255, 255u * px[ch] / alpha));
  }
}

// The two passes on an image whose alpha (if any) is already premultiplied.
void pil_resample_passes(const uint8_t* in, int h, int w, int c, uint8_t* out, int out_h, int out_w, PilFilter f) {
  const bool horizontal = out_w != w, vertical = out_h != h;
  const size_t out_row = static_cast<size_t>(out_w) * c;
  if (!vertical) {
    pil_horizontal_any(in, w, c, h, pil_coeffs(w, out_w, f), out_w, out);
    return;
  }
  const PilCoeffs kv = pil_coeffs(h, out_h, f);
  if (!horizontal) {
    pil_vertical(in, out_row, kv, 0, out_h, out);
    return;
  }
  // Only the input rows the vertical pass reads go through the horizontal pass (as Pillow).
  const int first = kv.first.front();
  const int last = kv.first.back() + kv.count.back();
  std::vector<uint8_t> tmp(static_cast<size_t>(last - first) * out_row);
  pil_horizontal_any(in + static_cast<size_t>(first) * w * c, w, c, last - first, pil_coeffs(w, out_w, f), out_w,
                     tmp.data());
  pil_vertical(tmp.data(), out_row, kv, first, out_h, out);
}

}  // namespace

void pil_resample(const uint8_t* in, int h, int w, int c, uint8_t* out, int out_h, int out_w, PilFilter filter) {
  if (c != 4) {
    pil_resample_passes(in, h, w, c, out, out_h, out_w, filter);
    return;
  }
  std::vector<uint8_t> premultiplied(in, in + static_cast<size_t>(h) * w * c);
  pil_premultiply(premultiplied.data(), static_cast<size_t>(h) * w, c);
  pil_resample_passes(premultiplied.data(), h, w, c, out, out_h, out_w, filter);
  pil_unpremultiply(out, static_cast<size_t>(out_h) * out_w, c);
}

}  // namespace torchfit::data
