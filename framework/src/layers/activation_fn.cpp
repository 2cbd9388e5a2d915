#include <torchfit/layers/activation_fn.h>

#include <algorithm>
#include <functional>
#include <map>

#include <torchfit/error.h>

namespace torchfit {
namespace {

using ActivationFn = std::function<at::Tensor(const at::Tensor&)>;

// Keras axis -1: the channels of an image (N, C, H, W), the last dim otherwise.
int64_t keras_last_axis(const at::Tensor& x) { return x.dim() == 4 ? 1 : -1; }

// keras/src/activations/activations.py (Keras 3), each in LibTorch's ops.
const std::map<std::string, ActivationFn>& activation_table() {
  static const std::map<std::string, ActivationFn> m = {
      {"linear", [](const at::Tensor& x) { return x; }},
      {"relu", [](const at::Tensor& x) { return at::relu(x); }},
      {"relu6", [](const at::Tensor& x) { return at::hardtanh(x, 0.0, 6.0); }},
      {"leaky_relu", [](const at::Tensor& x) { return at::leaky_relu(x, 0.2); }},  // negative_slope 0.2
      {"elu", [](const at::Tensor& x) { return at::elu(x, /*alpha=*/1.0); }},
      // scale 1.05070098735548049342, alpha 1.67326324235437728482: ATen's constants, the same digits.
      {"selu", [](const at::Tensor& x) { return at::selu(x); }},
      {"gelu", [](const at::Tensor& x) { return at::gelu(x); }},  // approximate=False (erf)
      {"silu", [](const at::Tensor& x) { return at::silu(x); }},
      {"swish", [](const at::Tensor& x) { return at::silu(x); }},
      {"hard_sigmoid", [](const at::Tensor& x) { return at::hardsigmoid(x); }},  // relu6(x + 3) / 6
      {"hard_silu", [](const at::Tensor& x) { return at::hardswish(x); }},       // x · relu6(x + 3) / 6
      {"hard_swish", [](const at::Tensor& x) { return at::hardswish(x); }},
      {"sigmoid", [](const at::Tensor& x) { return at::sigmoid(x); }},
      {"tanh", [](const at::Tensor& x) { return at::tanh(x); }},
      {"softplus", [](const at::Tensor& x) { return at::softplus(x); }},
      {"softsign", [](const at::Tensor& x) { return x / (x.abs() + 1.0); }},
      {"mish", [](const at::Tensor& x) { return at::mish(x); }},
      {"softmax", [](const at::Tensor& x) { return x.softmax(keras_last_axis(x)); }},
      {"log_softmax", [](const at::Tensor& x) { return x.log_softmax(keras_last_axis(x)); }},
      {"exponential", [](const at::Tensor& x) { return at::exp(x); }},
  };
  return m;
}

}  // namespace

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, fn] : activation_table()) n.push_back(name);
    return n;
  }();
  return names;
}

void check_activation(const std::string& name, const std::string& where) {
  if (activation_table().count(name)) return;
  std::string known;
  for (const auto& n : activation_names()) known += (known.empty() ? "" : ", ") + n;
  throw ConfigError(where + ": unknown activation '" + name + "' (known: " + known + ")");
}

at::Tensor apply_activation(const std::string& name, const at::Tensor& x, bool inplace) {
  if (inplace) {
    if (name == "relu") return x.relu_();
    if (name == "sigmoid") return x.sigmoid_();
    if (name == "tanh") return x.tanh_();
  }
  const auto it = activation_table().find(name);
  if (it == activation_table().end()) check_activation(name, "apply_activation");
  return it->second(x);
}

}  // namespace torchfit
