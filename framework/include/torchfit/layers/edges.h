#pragma once
/// @file edges.h
/// Edges1D, Edges2D, Edges3D: the zeros added or the values removed before and after each spatial axis —
/// the `padding` of ZeroPadding1D/2D/3D and the `cropping` of Cropping1D/2D/3D — in Keras's forms.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchfit {

/// (before, after) along each of D spatial axes, in Keras order (steps; rows, cols; depth, rows, cols).
template <size_t D>
struct Edges {
  std::array<std::array<int64_t, 2>, D> axes{};
  bool operator==(const Edges& o) const { return axes == o.axes; }
  /// (before, after) of axis 0, then of axis 1, …: (top, bottom, left, right) for an image.
  std::vector<int64_t> flat() const;
  /// "(1, 2)" for one axis, "((t, b), (l, r))" for several.
  std::string text() const;
  /// ConfigError "<who>: <what> must be >= 0, got <text()>" when any edge is negative.
  void check_non_negative(const std::string& who, const std::string& what) const;
};

/// A sequence's (left, right) steps. Keras's forms: one int (both) or (left, right); C++ `Edges1D(1)`,
/// `Edges1D(0, 2)`.
struct Edges1D : Edges<1> {
  Edges1D(int64_t both = 0) : Edges1D(both, both) {}  // NOLINT: an int is a Keras form
  Edges1D(int64_t left, int64_t right) { axes = {{{left, right}}}; }
};

/// An image's (top, bottom, left, right) pixels. Keras's forms: one int (all four), a pair (rows, cols) —
/// top = bottom = rows, left = right = cols — or ((top, bottom), (left, right)); C++: `Edges2D(1)`,
/// `Edges2D(1, 2)`, `Edges2D(top, bottom, left, right)`.
struct Edges2D : Edges<2> {
  Edges2D(int64_t all = 0) : Edges2D(all, all) {}  // NOLINT: an int is a Keras form
  Edges2D(int64_t rows, int64_t cols) : Edges2D(rows, rows, cols, cols) {}
  Edges2D(int64_t t, int64_t b, int64_t l, int64_t r) { axes = {{{t, b}, {l, r}}}; }
};

/// A volume's edges along (depth, rows, cols). Keras's forms: one int (all six), three ints (each axis's
/// both ends) or ((d1, d2), (h1, h2), (w1, w2)); C++: `Edges3D(1)`, `Edges3D(1, 2, 0)`,
/// `Edges3D(d1, d2, h1, h2, w1, w2)`.
struct Edges3D : Edges<3> {
  Edges3D(int64_t all = 0) : Edges3D(all, all, all) {}  // NOLINT: an int is a Keras form
  Edges3D(int64_t d, int64_t h, int64_t w) : Edges3D(d, d, h, h, w, w) {}
  Edges3D(int64_t d1, int64_t d2, int64_t h1, int64_t h2, int64_t w1, int64_t w2) {
    axes = {{{d1, d2}, {h1, h2}, {w1, w2}}};
  }
};

/// Written as Keras writes them: [left, right]; [[top, bottom], [left, right]]; [[d1, d2], [h1, h2], [w1, w2]].
void to_json(nlohmann::json& j, const Edges1D& e);
void to_json(nlohmann::json& j, const Edges2D& e);
void to_json(nlohmann::json& j, const Edges3D& e);
/// Read from any of their Keras forms; std::invalid_argument otherwise.
void from_json(const nlohmann::json& j, Edges1D& e);
void from_json(const nlohmann::json& j, Edges2D& e);
void from_json(const nlohmann::json& j, Edges3D& e);

}  // namespace torchfit
