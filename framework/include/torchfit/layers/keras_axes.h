#pragma once
/// @file keras_axes.h
/// A Keras `axis` argument (an int or a list of ints) and its resolution against a layer's input, as
/// Keras resolves it when the layer is built.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/layers/shape.h>

namespace torchfit {

/// A Keras `axis` argument: one axis or a list (Keras counts over (N, H, W, C) / (N, D), negatives from
/// the end). Written back in the form it was given (an int or a list). C++: `KerasAxes(-1)`,
/// `KerasAxes({1, 2, 3})`.
struct KerasAxes {
  KerasAxes(int64_t axis = -1) : axes{axis} {}                                    // NOLINT: an int is Keras's form
  KerasAxes(std::vector<int64_t> list) : axes(std::move(list)), is_list(true) {}  // NOLINT
  KerasAxes(std::initializer_list<int64_t> list) : KerasAxes(std::vector<int64_t>(list)) {}
  std::vector<int64_t> axes;
  bool is_list = false;
};
void to_json(nlohmann::json& j, const KerasAxes& a);
/// An int or a list of ints; std::invalid_argument otherwise.
void from_json(const nlohmann::json& j, KerasAxes& a);

/// `axes` resolved against a batch of per-sample `keras_shape` (rank r + 1 with the batch), as Keras's
/// layers do at build: each axis a in −(r+1)..r becomes a + r + 1 when negative, giving the Keras axes
/// 1..r (batch = 0), in the order given. `channels_first_image`: the axes count over a Keras 1 "th"
/// image (N, C, H, W) while the shape is (H, W, C): C, H, W map to Keras axes 3, 1, 2 (other ranks are
/// the same in both orders). Errors: ConfigError "<who>: axis <axes> …" naming the input shape, for an
/// empty list, the batch axis, an axis outside the input, or one given twice.
std::vector<int64_t> resolve_keras_axes(const KerasAxes& axes, const Shape& keras_shape, const std::string& who,
                                        bool channels_first_image = false);

}  // namespace torchfit
