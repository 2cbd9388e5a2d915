#pragma once
// Bilinear (or nearest-neighbour) affine resampling with scipy.ndimage's boundary rules — what
// keras-preprocessing 1.1's apply_affine_transform gets from scipy.ndimage.affine_transform(order=1, mode=fill_mode,
// cval=cval) (rules measured on scipy 1.10.1; see docs/keras_semantics.md, "fill_mode at the borders").
#include <array>
#include <string>

namespace torchfit::data {

/// Keras's fill_mode values (scipy.ndimage modes of the same names).
enum class FillMode { nearest, constant, reflect, wrap };

/// Parses "nearest" | "constant" | "reflect" | "wrap". Errors: ConfigError naming the value.
FillMode parse_fill_mode(const std::string& name);

/// Writes the (h, w, c) float32 image `out` (values as `in`, e.g. 0..255) with
///   out(r, c) = bilinear sample of `in` (h, w, c) at row m[0]·r' + m[1]·c' + m[2] and column
///               m[3]·r' + m[4]·c' + m[5],  r' = flip_vertical ? h−1−r : r, c' = flip_horizontal ? w−1−c : c
/// — scipy's affine_transform(order=1) with Keras's (row, col) matrix and offset, followed by Keras's
/// flip_axis (the flips pick the output pixel, so they stay exact). Coordinates are computed in double
/// in scipy's order ((r'·m0 + c'·m1) + m2) so that points on the border are classified as scipy does.
/// Per axis of length n, a sample point x outside [0, n−1] follows `mode`:
///   nearest  — x is clamped to [0, n−1];
///   constant — the whole output pixel is `cval` (no blending with the image at all);
///   reflect  — bilinear on the half-sample-symmetric extension (… b a | a b … y z | z y …, period 2n);
///   wrap     — scipy's old "wrap", period n−1: x < 0 becomes x + (n−1)·(trunc(−x/(n−1)) + 1),
///              x > n−1 becomes x − (n−1)·trunc(x/(n−1)); columns 0 and n−1 are neighbours of nothing
///              (−0.5 samples between n−2 and n−1, not between n−1 and 0 as OpenCV's BORDER_WRAP).
/// An axis of length 1 samples its only pixel (constant: only x == 0). `in` and `out` must not overlap.
/// Every output value is multiplied by `scale` (default 1: unchanged), e.g. Keras's rescale fused into
/// the write; `cval` pixels give cval·scale. With fill mode nearest the sample points of a row are
/// computed from the row's first point (x0 + k·dx) rather than one by one: a difference in the last
/// bits of the coordinates (~1e-13 px), which clamping turns into no jump in the value.
///
/// `order` 0 (Keras's interpolation_order=0, scipy affine_transform(order=0)) takes the one pixel nearest to
/// the sample point instead of blending four: after the mode's mapping (constant: cval outside [0, n−1];
/// nearest: clamped; wrap: as above; reflect: scipy's coordinate reflection, −0.6 → −0.4, n − 0.4 → n − 1.6),
/// the index floor(x + 0.5) (halves round up), taken on the half-sample-symmetric extension for reflect.
/// Every output value is then an input value (× scale): class-id masks stay class ids. Rules checked
/// against scipy 1.10.1 at every half and quarter point of 1- to 8-pixel axes. Errors: ConfigError for an
/// order other than 0 or 1, or an empty image.
void affine_resample(const float* in, int h, int w, int c, const std::array<double, 6>& m, bool flip_horizontal,
                     bool flip_vertical, FillMode mode, float cval, float* out, float scale = 1.f, int order = 1);

}  // namespace torchfit::data
