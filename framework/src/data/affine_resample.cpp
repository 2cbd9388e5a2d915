// Bilinear (order 1) and nearest-neighbour (order 0) affine resampling with scipy.ndimage's (1.10)
// boundary rules, for Keras's apply_affine_transform. Compiled with -ffp-contract=off (framework/CMakeLists.txt): the
// sample coordinates must round exactly as scipy's, or a point lying on the border could change side.
#include "data/affine_resample.h"

#include <torchfit/error.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace torchfit::data {

FillMode parse_fill_mode(const std::string& name) {
  if (name == "nearest") return FillMode::nearest;
  if (name == "constant") return FillMode::constant;
  if (name == "reflect") return FillMode::reflect;
  if (name == "wrap") return FillMode::wrap;
  throw ConfigError("fill_mode must be nearest, constant, reflect or wrap, got \"" + name + "\"");
}

namespace {

// The two taps of one axis: value = v[i0] + (v[i1] − v[i0])·t.
struct AxisTaps {
  int i0 = 0, i1 = 0;
  float t = 0;
};

// Coordinates beyond ±1e9 pixels (and NaN, as 0) are brought into range first, so that the integer
// conversions below stay defined; no real transform comes near.
double tame_coordinate(double x) {
  if (std::isnan(x)) return 0.0;
  return std::clamp(x, -1e9, 1e9);
}

// scipy's "wrap" (NI_EXTEND_WRAP): period n − 1, so the first and the last pixel are one point.
double wrap_period_n_minus_1(double x, int n) {
  const int64_t period = n - 1;
  if (x < 0) {
    x += static_cast<double>(period * (static_cast<int64_t>(-x / static_cast<double>(period)) + 1));
  } else if (x > n - 1) {
    x -= static_cast<double>(period * static_cast<int64_t>(x / static_cast<double>(period)));
  }
  return std::clamp(x, 0.0, static_cast<double>(n - 1));
}

// Fill modes constant, nearest and wrap on an axis of n ≥ 2 pixels: x brought into [0, n − 1] (nearest
// clamps, wrap folds); false ⇒ the pixel is cval (constant, x outside). Reflect is the callers' own.
bool map_into_axis(double& x, int n, FillMode mode) {
  const double last = n - 1;
  if (mode == FillMode::constant) return !(x < 0 || x > last);
  x = mode == FillMode::wrap ? wrap_period_n_minus_1(x, n) : std::clamp(x, 0.0, last);
  return true;
}

// Index k of the half-sample-symmetric extension (period 2n): … 1 0 | 0 1 … n−1 | n−1 n−2 ….
int reflect_index(int64_t k, int n) {
  const int64_t period = 2 * static_cast<int64_t>(n);
  int64_t m = k % period;
  if (m < 0) m += period;
  return static_cast<int>(m < n ? m : period - 1 - m);
}

// Taps for sample coordinate x on an axis of n pixels; false ⇒ the pixel is cval (constant mode).
bool axis_taps(double x, int n, FillMode mode, AxisTaps& taps) {
  x = tame_coordinate(x);
  if (n == 1) {
    taps = {};
    return mode != FillMode::constant || x == 0.0;
  }
  if (mode == FillMode::reflect) {
    const double f = std::floor(x);
    const auto k = static_cast<int64_t>(f);
    taps = {reflect_index(k, n), reflect_index(k + 1, n), static_cast<float>(x - f)};
    return true;
  }
  if (!map_into_axis(x, n, mode)) return false;
  const int i0 = static_cast<int>(x);  // 0 <= x <= n − 1
  taps = {i0, std::min(i0 + 1, n - 1), static_cast<float>(x - i0)};
  return true;
}

// scipy's NI_EXTEND_REFLECT coordinate map (map_coordinate): a point outside [0, n − 1] is reflected
// about the border half a pixel out (−x − 1 left, 2n − x − 1 right), after removing whole periods 2n.
double reflect_coordinate(double x, int n) {
  const double period = 2.0 * n;
  if (x < 0) {
    if (x < -period) x += period * static_cast<double>(static_cast<int64_t>(-x / period));
    return x < -n ? x + period : -x - 1;
  }
  if (x > n - 1) {
    x -= period * static_cast<double>(static_cast<int64_t>(x / period));
    if (x >= n) x = period - x - 1;
  }
  return x;
}

// Order 0: the index of the pixel nearest to sample coordinate x on an axis of n pixels (scipy's
// floor(x + 0.5) after the mode's map); false ⇒ the pixel is cval (constant mode).
bool axis_index(double x, int n, FillMode mode, int& index) {
  x = tame_coordinate(x);
  index = 0;
  if (n == 1) return mode != FillMode::constant || x == 0.0;
  if (mode == FillMode::reflect) {
    index = reflect_index(static_cast<int64_t>(std::floor(reflect_coordinate(x, n) + 0.5)), n);
    return true;
  }
  if (!map_into_axis(x, n, mode)) return false;
  index = std::min(static_cast<int>(std::floor(x + 0.5)), n - 1);
  return true;
}

// Bilinear blend of the four pixels p00 (top left), p01, p10, p11 into o, channel by channel.
template <int kC>
inline void blend(const float* p00, const float* p01, const float* p10, const float* p11, float tr, float tc, int c,
                  float* o) {
  const int n = kC > 0 ? kC : c;
  for (int k = 0; k < n; ++k) {
    const float top = p00[k] + (p01[k] - p00[k]) * tc;
    const float bottom = p10[k] + (p11[k] - p10[k]) * tc;
    o[k] = top + (bottom - top) * tr;
  }
}

struct AffineJob {
  const float* in;
  int h, w, c;
  const std::array<double, 6>* m;
  bool flip_vertical;  // (the horizontal flip is in the column table)
  FillMode mode;
  float cval;
  float scale;
  float* out;
};

// A pixel by the mode's rules (any sample point; used where it may be near or beyond a border).
template <int kC>
void border_pixel(const AffineJob& j, double xr, double xc, float* o) {
  AxisTaps a, b;
  if (!axis_taps(xr, j.h, j.mode, a) || !axis_taps(xc, j.w, j.mode, b)) {
    std::fill(o, o + j.c, j.cval * j.scale);
    return;
  }
  const size_t row = static_cast<size_t>(j.w) * j.c;
  const float* r0 = j.in + static_cast<size_t>(a.i0) * row;
  const float* r1 = j.in + static_cast<size_t>(a.i1) * row;
  const size_t c0 = static_cast<size_t>(b.i0) * j.c, c1 = static_cast<size_t>(b.i1) * j.c;
  blend<kC>(r0 + c0, r0 + c1, r1 + c0, r1 + c1, a.t, b.t, j.c, o);
  if (j.scale != 1.f)
    for (int k = 0; k < j.c; ++k) o[k] *= j.scale;
}

// The columns [lo, hi) of a row whose sample points x0 + col·d lie in [margin, last − margin] on one
// axis (intersected with the range already in lo, hi). The margin keeps points that are close to a
// border on the exact per-pixel path.
void narrow_to_inside(double x0, double d, double last, int& lo, int& hi) {
  constexpr double kMargin = 1e-3;
  const double a = kMargin - x0, b = last - kMargin - x0;  // d·col must lie in [a, b]
  if (d == 0) {
    if (a > 0 || b < 0) hi = lo;
    return;
  }
  double from = a / d, to = b / d;
  if (d < 0) std::swap(from, to);
  from = std::max(from, static_cast<double>(lo)), to = std::min(to, static_cast<double>(hi) - 1);
  if (!(from <= to)) {
    hi = lo;
    return;
  }
  lo = static_cast<int>(std::ceil(from)), hi = static_cast<int>(std::floor(to)) + 1;
}

template <int kC>
void resample_row(const AffineJob& j, int r, const double* cols) {
  const std::array<double, 6>& m = *j.m;
  const int c = kC > 0 ? kC : j.c;
  const size_t row = static_cast<size_t>(j.w) * c;
  const double rr = j.flip_vertical ? j.h - 1 - r : r;
  const double base_r = rr * m[0], base_c = rr * m[3];
  float* out = j.out + static_cast<size_t>(r) * row;
  // Sample points are linear in the output column: find the run whose 2×2 taps are all inside.
  const double first = cols[0], step = j.w > 1 ? cols[1] - cols[0] : 1;
  int lo = 0, hi = j.w;
  narrow_to_inside((base_r + first * m[1]) + m[2], step * m[1], j.h - 1, lo, hi);
  narrow_to_inside((base_c + first * m[4]) + m[5], step * m[4], j.w - 1, lo, hi);
  if (hi <= lo) lo = hi = 0;
  auto exact = [&](int col) {
    const double xr = (base_r + cols[col] * m[1]) + m[2], xc = (base_c + cols[col] * m[4]) + m[5];
    border_pixel<kC>(j, xr, xc, out + static_cast<size_t>(col) * c);
  };
  for (int col = 0; col < lo; ++col) exact(col);
  // Inside the run, stepping is exact enough: the points stay ≥ 1e-3 px from the borders, and the
  // weights differ from the direct formula's by ~1e-13.
  const double dr = step * m[1], dc = step * m[4];
  double xr = (base_r + cols[lo] * m[1]) + m[2], xc = (base_c + cols[lo] * m[4]) + m[5];
  for (int col = lo; col < hi; ++col, xr += dr, xc += dc) {
    const int i0 = static_cast<int>(xr), j0 = static_cast<int>(xc);
    const float* p = j.in + static_cast<size_t>(i0) * row + static_cast<size_t>(j0) * c;
    float* o = out + static_cast<size_t>(col) * c;
    blend<kC>(p, p + c, p + row, p + row + c, static_cast<float>(xr - i0), static_cast<float>(xc - j0), c, o);
    if (j.scale != 1.f)
      for (int k = 0; k < c; ++k) o[k] *= j.scale;
  }
  for (int col = hi; col < j.w; ++col) exact(col);
}

// ---- fill_mode "nearest": every column of a row through one branch-free path ----
// Clamping is continuous (a point a hair inside or outside a border samples the same value), so this
// mode needs no exact border classification: each point is computed from the row's start, clamped to
// [0, n − 1], and blended from its taps — the taps and weights axis_taps gives for that point.

// The taps of one row's points: offset of the top-left tap (floats), steps to the right and the lower
// tap (0 on the last column / row, where both taps are the pixel itself), and the two fractions.
struct RowTaps {
  std::vector<int32_t> off, right, down;
  std::vector<float> tr, tc;
  void resize(size_t n) {
    if (off.size() >= n) return;
    off.resize(n), right.resize(n), down.resize(n), tr.resize(n), tc.resize(n);
  }
};

// The taps of the n points (xr + k·dr, xc + k·dc), k = 0 … n−1 (finite), clamped to the (h, w, c) image. No gathers, so
// it vectorises; clones for AVX2 and AVX-512 next to plain x86-64 are picked at run time, and all do the same IEEE
// operations (no FMA: -ffp-contract=off), so they agree bit for bit.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TORCHFIT_VECTOR_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define TORCHFIT_VECTOR_CLONES  // one build for the target's baseline (other CPUs, other compilers)
#endif
TORCHFIT_VECTOR_CLONES void nearest_taps(double xr, double dr, double xc, double dc, int n, int h, int w, int c,
                                         int32_t* __restrict off, int32_t* __restrict right, int32_t* __restrict down,
                                         float* __restrict tr, float* __restrict tc) {
  const double last_r = h - 1, last_c = w - 1;
  for (int k = 0; k < n; ++k) {
    double yr = xr + k * dr, yc = xc + k * dc;
    yr = yr > 0 ? yr : 0.0;  // (vectorised only because this file is built with -fno-trapping-math)
    yr = yr < last_r ? yr : last_r;
    yc = yc > 0 ? yc : 0.0;
    yc = yc < last_c ? yc : last_c;
    const int i0 = static_cast<int>(yr), j0 = static_cast<int>(yc);
    tr[k] = static_cast<float>(yr - i0), tc[k] = static_cast<float>(yc - j0);
    off[k] = (i0 * w + j0) * c;
    down[k] = i0 < h - 1 ? w * c : 0;
    right[k] = j0 < w - 1 ? c : 0;
  }
}

// Blends the n pixels of `t` from `in` into out (interleaved, c channels), times `scale`.
template <int kC>
void blend_taps(const float* __restrict in, int n, int c, const RowTaps& t, float scale, float* __restrict out) {
  const int nc = kC > 0 ? kC : c;
  for (int k = 0; k < n; ++k) {
    const float* p = in + t.off[static_cast<size_t>(k)];
    const int r = t.right[static_cast<size_t>(k)], d = t.down[static_cast<size_t>(k)];
    const float tr = t.tr[static_cast<size_t>(k)], tc = t.tc[static_cast<size_t>(k)];
    for (int ch = 0; ch < nc; ++ch) {
      const float top = p[ch] + (p[r + ch] - p[ch]) * tc;
      const float bottom = p[d + ch] + (p[d + r + ch] - p[d + ch]) * tc;
      out[static_cast<size_t>(k) * nc + ch] = (top + (bottom - top) * tr) * scale;
    }
  }
}

void resample_nearest(const AffineJob& j, bool flip_horizontal) {
  const std::array<double, 6>& m = *j.m;
  thread_local RowTaps taps;  // per thread, reused: no allocation per image
  taps.resize(static_cast<size_t>(j.w));
  const double c0 = flip_horizontal ? j.w - 1 : 0, step = flip_horizontal ? -1 : 1;
  for (int r = 0; r < j.h; ++r) {
    const double rr = j.flip_vertical ? j.h - 1 - r : r;
    const double xr = (rr * m[0] + c0 * m[1]) + m[2], xc = (rr * m[3] + c0 * m[4]) + m[5];
    nearest_taps(xr, step * m[1], xc, step * m[4], j.w, j.h, j.w, j.c, taps.off.data(), taps.right.data(),
                 taps.down.data(), taps.tr.data(), taps.tc.data());
    float* out = j.out + static_cast<size_t>(r) * j.w * j.c;
    if (j.c == 1)
      blend_taps<1>(j.in, j.w, 1, taps, j.scale, out);
    else if (j.c == 3)
      blend_taps<3>(j.in, j.w, 3, taps, j.scale, out);
    else
      blend_taps<0>(j.in, j.w, j.c, taps, j.scale, out);
  }
}

// interpolation_order 0: every output pixel copies its nearest input pixel (or is cval), per pixel with
// the exact coordinates (masks are one channel; no fast path needed).
void resample_order0(const AffineJob& j, bool flip_horizontal) {
  const std::array<double, 6>& m = *j.m;
  for (int r = 0; r < j.h; ++r) {
    const double rr = j.flip_vertical ? j.h - 1 - r : r;
    for (int col = 0; col < j.w; ++col) {
      const double cc = flip_horizontal ? j.w - 1 - col : col;
      const double xr = (rr * m[0] + cc * m[1]) + m[2], xc = (rr * m[3] + cc * m[4]) + m[5];
      float* o = j.out + (static_cast<size_t>(r) * j.w + col) * j.c;
      int i = 0, k = 0;
      if (!axis_index(xr, j.h, j.mode, i) || !axis_index(xc, j.w, j.mode, k)) {
        std::fill(o, o + j.c, j.cval * j.scale);
        continue;
      }
      const float* p = j.in + (static_cast<size_t>(i) * j.w + k) * j.c;
      for (int ch = 0; ch < j.c; ++ch) o[ch] = p[ch] * j.scale;
    }
  }
}

}  // namespace

void affine_resample(const float* in, int h, int w, int c, const std::array<double, 6>& m, bool flip_horizontal,
                     bool flip_vertical, FillMode mode, float cval, float* out, float scale, int order) {
  if (h < 1 || w < 1 || c < 1)
    throw ConfigError("affine_resample: empty image " + std::to_string(h) + "x" + std::to_string(w) + "x" +
                      std::to_string(c));
  if (order != 0 && order != 1)
    throw ConfigError("affine_resample: interpolation order must be 0 or 1, got " + std::to_string(order));
  const AffineJob job{in, h, w, c, &m, flip_vertical, mode, cval, scale, out};
  if (order == 0) {
    resample_order0(job, flip_horizontal);
    return;
  }
  // The branch-free nearest path needs finite coordinates and 32-bit tap offsets; anything else (a
  // NaN or astronomically large matrix, an image of 2^31 floats) takes the exact per-pixel path.
  const bool tame = std::all_of(m.begin(), m.end(), [](double v) { return std::abs(v) <= 1e12; });
  if (mode == FillMode::nearest && tame && int64_t{h} * w * c < (int64_t{1} << 31) - int64_t{w} * c - c) {
    resample_nearest(job, flip_horizontal);  // 32-bit tap offsets
    return;
  }
  std::vector<double> cols(static_cast<size_t>(w));  // c' of each output column (flipped or not)
  for (int col = 0; col < w; ++col) cols[static_cast<size_t>(col)] = flip_horizontal ? w - 1 - col : col;
  for (int r = 0; r < h; ++r) {
    if (c == 1)
      resample_row<1>(job, r, cols.data());
    else if (c == 3)
      resample_row<3>(job, r, cols.data());
    else
      resample_row<0>(job, r, cols.data());
  }
}

}  // namespace torchfit::data
