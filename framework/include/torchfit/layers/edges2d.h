#pragma once
/// @file edges2d.h
/// Edges2D: rows/columns at the four edges of an image, the `padding` of ZeroPadding2D and the `cropping`
/// of Cropping2D, in Keras's forms.
#include <cstdint>

#include <nlohmann/json.hpp>

namespace torchfit {

/// (top, bottom, left, right) in pixels. Keras's forms: one int (all four), a pair (rows, cols) — top =
/// bottom = rows, left = right = cols — or ((top, bottom), (left, right)); C++:
/// `Edges2D(1)`, `Edges2D(1, 2)`, `Edges2D(top, bottom, left, right)`.
struct Edges2D {
  Edges2D(int64_t all = 0) : top(all), bottom(all), left(all), right(all) {}  // NOLINT: an int is a Keras form
  Edges2D(int64_t rows, int64_t cols) : top(rows), bottom(rows), left(cols), right(cols) {}
  Edges2D(int64_t t, int64_t b, int64_t l, int64_t r) : top(t), bottom(b), left(l), right(r) {}
  int64_t top, bottom, left, right;
  bool operator==(const Edges2D& o) const {
    return top == o.top && bottom == o.bottom && left == o.left && right == o.right;
  }
  /// ConfigError "<who>: <what> must be >= 0, got ((t, b), (l, r))" when any edge is negative.
  void check_non_negative(const std::string& who, const std::string& what) const;
};

/// Written as Keras writes it: [[top, bottom], [left, right]].
void to_json(nlohmann::json& j, const Edges2D& e);
/// Reads an int, [rows, cols] or [[top, bottom], [left, right]]; std::invalid_argument otherwise.
void from_json(const nlohmann::json& j, Edges2D& e);

}  // namespace torchfit
