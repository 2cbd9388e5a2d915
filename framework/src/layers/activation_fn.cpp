#include <torchfit/layers/activation_fn.h>

#include <algorithm>

#include <torchfit/error.h>

namespace torchfit {

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = {"elu", "gelu", "linear", "relu", "sigmoid", "softmax", "tanh"};
  return names;
}

void check_activation(const std::string& name, const std::string& where) {
  const auto& names = activation_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError(where + ": unknown activation '" + name + "' (known: " + known + ")");
  }
}

at::Tensor apply_activation(const std::string& name, const at::Tensor& x, bool inplace) {
  if (name == "linear") return x;
  if (name == "relu") return inplace ? x.relu_() : x.relu();
  if (name == "sigmoid") return inplace ? x.sigmoid_() : x.sigmoid();
  if (name == "tanh") return inplace ? x.tanh_() : x.tanh();
  if (name == "softmax") return x.softmax(x.dim() == 4 ? 1 : -1);  // Keras axis -1: channels of an image
  if (name == "elu") return at::elu(x, /*alpha=*/1.0);             // keras.activations.elu, alpha 1.0
  if (name == "gelu") return at::gelu(x);                          // keras.activations.gelu, approximate=False (erf)
  throw ConfigError("unknown activation '" + name + "'");
}

}  // namespace torchfit
