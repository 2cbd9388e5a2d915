#pragma once
// Keras default initialisers (internal).
#include <ATen/ATen.h>
#include <cmath>
#include <string>
#include <utility>

namespace torchfit::detail {

/// glorot_uniform: U(−l, l), l = sqrt(6 / (fan_in + fan_out)) (Keras default kernel initialiser).
inline at::Tensor glorot_uniform(at::IntArrayRef shape, int64_t fan_in, int64_t fan_out) {
  const double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return at::empty(shape, at::kFloat).uniform_(-limit, limit);
}

/// "same" padding as TensorFlow: total = max((ceil(in/s) − 1)·s + (k−1)·d + 1 − in, 0), the extra
/// pixel (odd total) at the end. Returns {before, after}.
inline std::pair<int64_t, int64_t> same_padding(int64_t in, int64_t k, int64_t s, int64_t d = 1) {
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>((out - 1) * s + (k - 1) * d + 1 - in, 0);
  return {total / 2, total - total / 2};
}

}  // namespace torchfit::detail

namespace torchfit::detail {

/// Output length of one spatial axis for Keras padding "valid" | "same" (kernel k, stride s, dilation d),
/// and the (before, after) padding "same" needs. Returns 0 when a "valid" window does not fit.
inline int64_t window_output(int64_t in, int64_t k, int64_t s, int64_t d, const std::string& padding,
                             int64_t* before, int64_t* after) {
  *before = *after = 0;
  if (padding == "same") {
    auto [b, a] = same_padding(in, k, s, d);
    *before = b;
    *after = a;
    return (in + s - 1) / s;
  }
  const int64_t span = d * (k - 1) + 1;
  if (span > in) return 0;
  return (in - span) / s + 1;
}

}  // namespace torchfit::detail
