#include <torchfit/layers/keras_axes.h>

#include <algorithm>
#include <stdexcept>

#include <torchfit/error.h>

namespace torchfit {

void to_json(nlohmann::json& j, const KerasAxes& a) {
  if (a.is_list || a.axes.size() != 1) {
    j = a.axes;
  } else {
    j = a.axes[0];
  }
}

void from_json(const nlohmann::json& j, KerasAxes& a) {
  if (j.is_number_integer()) {
    a = KerasAxes(j.get<int64_t>());
    return;
  }
  bool ok = j.is_array();
  for (const auto& e : j) ok = ok && e.is_number_integer();
  if (!ok) throw std::invalid_argument("expected an integer or a list of integers");
  a = KerasAxes(j.get<std::vector<int64_t>>());
}

std::vector<int64_t> resolve_keras_axes(const KerasAxes& axes, const Shape& keras_shape, const std::string& who,
                                        bool channels_first_image) {
  const auto rank = static_cast<int64_t>(keras_shape.size()) + 1;
  const std::string given = nlohmann::json(axes).dump();
  if (axes.axes.empty()) throw ConfigError(who + ": axis " + given + " names no axis");
  std::vector<int64_t> out;
  for (const int64_t a : axes.axes) {
    int64_t k = a < 0 ? a + rank : a;
    if (k <= 0 || k >= rank) {
      throw ConfigError(who + ": axis " + given + ": " + std::to_string(a) +
                        (k == 0 ? " is the batch axis" : " is outside the input") + " " + format_shape(keras_shape) +
                        " (Keras axes 1.." + std::to_string(rank - 1) + " or -1..-" + std::to_string(rank - 1) + ")");
    }
    if (channels_first_image && rank == 4) k = k == 1 ? 3 : k - 1;  // (N, C, H, W) → (N, H, W, C)
    if (std::count(out.begin(), out.end(), k)) {
      throw ConfigError(who + ": axis " + given + " names axis " + std::to_string(k) + " twice (input " +
                        format_shape(keras_shape) + ")");
    }
    out.push_back(k);
  }
  return out;
}

}  // namespace torchfit
