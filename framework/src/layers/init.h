#pragma once
// Keras default initialisers and the window geometry shared by the convolution and pooling layers (internal).
#include <ATen/ATen.h>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include <torchfit/error.h>
#include <torchfit/layers/shape.h>

#include <string>
#include <utility>
#include "layers/conv_weight_grad.h"

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

/// Output length of one spatial axis for Keras padding "valid" | "same" | "causal" (kernel k, stride s,
/// dilation d), and the (before, after) padding "same" needs ("causal": (k − 1)·d before, Keras's Conv1D).
/// Returns 0 when a "valid" window does not fit.
inline int64_t window_output(int64_t in, int64_t k, int64_t s, int64_t d, const std::string& padding, int64_t* before,
                             int64_t* after) {
  *before = *after = 0;
  if (padding == "same") {
    auto [b, a] = same_padding(in, k, s, d);
    *before = b;
    *after = a;
    return (in + s - 1) / s;
  }
  const int64_t span = d * (k - 1) + 1;
  if (padding == "causal") {
    *before = span - 1;
    return (in - 1) / s + 1;
  }
  if (span > in) return 0;
  return (in - span) / s + 1;
}

}  // namespace torchfit::detail

namespace torchfit::detail {

/// Throws ConfigError naming `who` unless every kernel/stride/dilation entry is > 0 and padding is
/// "valid" or "same" (or "causal", when `causal` allows it: Conv1D).
inline void check_window_options(const std::string& who, at::IntArrayRef kernel, at::IntArrayRef strides,
                                 at::IntArrayRef dilation, const std::string& padding, bool causal = false) {
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dilation[i] <= 0) {
      throw ConfigError(who + ": kernel/pool size, strides and dilation_rate must be > 0");
    }
  }
  if (causal && padding == "causal") return;
  if (padding != "valid" && padding != "same") {
    throw ConfigError(who + ": padding must be 'valid'" + (causal ? ", 'same' or 'causal'" : " or 'same'") + ", got '" +
                      padding + "'");
  }
}

/// ConfigError "<who> expects <what the rank is>, got <shape>" unless the Keras input `in` has `n` spatial
/// axes and the channels: a sequence (steps, channels) for n = 1, an image (H, W, C) for 2, a volume
/// (D, H, W, C) for 3.
inline void expect_spatial_rank(const std::string& who, const Shape& in, size_t n) {
  if (in.size() == n + 1) return;
  static const char* const kinds[] = {"", "a sequence (steps, channels)", "a 3-D input (H, W, C)",
                                      "a volume (D, H, W, C)"};
  throw ConfigError(who + " expects " + kinds[std::min<size_t>(n, 3)] + ", got " + format_shape(in));
}

/// Output sizes of an N-D window (N = k.size(): kernel k, strides s, dilation d) over the Keras input
/// (spatial…, C) — a sequence (steps, C), an image (H, W, C), a volume (D, H, W, C) — and the (before,
/// after) padding of each axis, written to `pad` (2·N values). Errors: ConfigError naming `who` for an input
/// of another rank or a "valid" window larger than the input (`what` is "kernel" or "pool").
inline std::vector<int64_t> window_output_nd(const std::string& who, const std::string& what, const Shape& in,
                                             at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef d,
                                             const std::string& padding, std::vector<int64_t>& pad) {
  const size_t n = k.size();
  expect_spatial_rank(who, in, n);
  pad.assign(2 * n, 0);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    out[i] = window_output(in[i], k[i], s[i], d[i], padding, &pad[2 * i], &pad[2 * i + 1]);
    if (out[i] != 0) continue;
    if (n == 1) {
      throw ConfigError(who + ": the window of " + std::to_string(d[0] * (k[0] - 1) + 1) +
                        " steps is longer than the input " + format_shape(in));
    }
    std::string size = std::to_string(k[0]);
    for (size_t j = 1; j < n; ++j) size += "x" + std::to_string(k[j]);
    throw ConfigError(who + ": " + what + " " + size + " is larger than its input " + format_shape(in));
  }
  return out;
}

/// window_output_nd for a 2-D window over an image (H, W, C): (H', W'), `pad` (top, bottom, left, right).
inline std::array<int64_t, 2> window_output_2d(const std::string& who, const std::string& what, const Shape& in,
                                               at::IntArrayRef k, at::IntArrayRef s, at::IntArrayRef d,
                                               const std::string& padding, std::vector<int64_t>& pad) {
  const std::vector<int64_t> out = window_output_nd(who, what, in, k, s, d, padding, pad);
  return {out[0], out[1]};
}

/// conv2d_train (at::conv2d, with torchfit's weight gradient where it applies) with Keras/TensorFlow
/// padding: symmetric padding goes to the kernel, asymmetric "same" padding (extra pixel at the
/// bottom/right) is applied explicitly first.
inline at::Tensor conv2d_padded(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::IntArrayRef s,
                                at::IntArrayRef d, const std::vector<int64_t>& pad, int64_t groups = 1) {
  if (pad[0] == pad[1] && pad[2] == pad[3]) return conv2d_train(x, w, b, s, {pad[0], pad[2]}, d, groups);
  auto padded = at::constant_pad_nd(x, {pad[2], pad[3], pad[0], pad[1]}, 0);
  return conv2d_train(padded, w, b, s, at::IntArrayRef({0, 0}), d, groups);
}

/// Pooling strides: Keras's default is the pool size; a single value means every axis. Validates all.
inline std::vector<int64_t> pool_strides(const std::string& who, at::IntArrayRef pool,
                                         const std::optional<std::vector<int64_t>>& strides,
                                         const std::string& padding) {
  std::vector<int64_t> st = strides ? *strides : pool.vec();
  if (st.size() == 1) st.assign(pool.size(), st[0]);
  if (st.size() != pool.size()) {
    const std::string n = pool.size() == 2 ? "a pair" : std::to_string(pool.size()) + " values (one per axis)";
    throw ConfigError(who + ": strides must be one value or " + n);
  }
  check_window_options(who, pool, st, std::vector<int64_t>(pool.size(), 1), padding);
  return st;
}

}  // namespace torchfit::detail
