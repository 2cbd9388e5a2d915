#include "layers/normalized_axes.h"

#include <algorithm>
#include <sstream>

#include <torchfit/layers/shape.h>

#include "layers/layer_export.h"

namespace torchfit::detail {

void check_epsilon(const std::string& who, double epsilon) {
  if (epsilon > 0.0) return;
  std::ostringstream os;
  os << who << ": epsilon must be > 0, got " << epsilon;
  throw ConfigError(os.str());
}

void set_gamma_and_beta(const std::string& who, at::Tensor& gamma, at::Tensor& beta,
                        const std::vector<at::Tensor>& weights) {
  expect_keras_weight_count(who, weights, (gamma.defined() ? 1 : 0) + (beta.defined() ? 1 : 0));
  size_t i = 0;
  if (gamma.defined()) assign_keras_weight(who, gamma, weights[i++], "gamma");
  if (beta.defined()) assign_keras_weight(who, beta, weights[i], "beta");
}

std::vector<at::Tensor> gamma_and_beta_to_keras(const at::Tensor& gamma, const at::Tensor& beta) {
  std::vector<at::Tensor> out;
  if (gamma.defined()) out.push_back(keras_weight_copy(gamma));
  if (beta.defined()) out.push_back(keras_weight_copy(beta));
  return out;
}

NormalizedAxes normalized_axes(const std::string& who, const KerasAxes& axis, const Shape& in) {
  NormalizedAxes n;
  const auto rank = static_cast<int64_t>(in.size()) + 1;
  for (int64_t a : axis.axes) {
    const int64_t t = keras_to_tensor_axis(in, a);
    const int64_t k = a < 0 ? a + rank : a;
    if (t < 0 || std::count(n.keras.begin(), n.keras.end(), k)) {
      throw ConfigError(who + ": axis " + std::to_string(a) + " is the batch axis, repeated or outside the input " +
                        format_shape(in));
    }
    n.keras.push_back(k);
    n.tensor.push_back(t);
  }
  std::sort(n.keras.begin(), n.keras.end());
  n.param_view.assign(static_cast<size_t>(rank), 1);
  for (int64_t k : n.keras) {
    n.param_shape.push_back(in[static_cast<size_t>(k - 1)]);
    n.param_view[static_cast<size_t>(k)] = in[static_cast<size_t>(k - 1)];
  }
  return n;
}

at::Tensor weight_against_tensor(const at::Tensor& weight, const std::vector<int64_t>& param_view, bool contiguous) {
  at::Tensor v = weight.reshape(param_view);
  if (v.dim() == 4) v = v.permute({0, 3, 1, 2});  // Keras (N, H, W, C) → (N, C, H, W)
  return contiguous ? v.contiguous() : v;
}

std::string onnx_mean_over(const Layer& l, io::OnnxGraph& g, std::string x, const std::vector<int64_t>& axes,
                           const std::string& what) {
  for (auto a = axes.rbegin(); a != axes.rend(); ++a)
    x = g.add_node("ReduceMean", {x}, {{"axes", std::vector<int64_t>{*a}}, {"keepdims", 1}}, onnx_name(l, what));
  return x;
}

}  // namespace torchfit::detail
