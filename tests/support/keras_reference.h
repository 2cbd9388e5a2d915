#pragma once
// Independent float64 references of Keras layers: tests/layers/reference/keras_layers_reference.py (NumPy,
// written from TensorFlow's/Keras's definitions) run through /usr/bin/python3.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/base_pooling.h>
#include <torchfit/model/sequential.h>

#include "support/temp_dir.h"

namespace torchfit::testing {

/// {"shape": [...], "data": [...]} of a tensor (any layout; written in logical C order).
inline nlohmann::json tensor_json(const at::Tensor& t) {
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return {{"shape", c.sizes().vec()}, {"data", std::vector<double>(p, p + c.numel())}};
}

/// Why the reference cannot run here ("" when it can): /usr/bin/python3 with NumPy is needed.
inline std::string keras_reference_unavailable() {
  static const std::string why = [] {
    if (std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") != 0) {
      return std::string("/usr/bin/python3 with NumPy (Debian python3-numpy) is not available");
    }
    return std::string();
  }();
  return why;
}

namespace detail {

/// Runs the reference script on `request`; its result JSON, or null after ADD_FAILURE.
inline nlohmann::json run_keras_reference(const nlohmann::json& request) {
  TempDir dir("keras_ref");
  const std::string in = dir.file("request.json"), out = dir.file("result.json");
  std::ofstream(in) << request.dump();
  const std::string script = std::string(TORCHFIT_SOURCE_DIR) + "/tests/layers/reference/keras_layers_reference.py";
  const std::string cmd = "/usr/bin/python3 '" + script + "' '" + in + "' '" + out + "'";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "reference failed: " << cmd;
    return nullptr;
  }
  nlohmann::json result;
  std::ifstream(out) >> result;
  return result;
}

inline at::Tensor reference_tensor(const nlohmann::json& t) {
  return at::tensor(t["data"].get<std::vector<double>>(), at::kDouble).reshape(t["shape"].get<std::vector<int64_t>>());
}

}  // namespace detail

/// The reference output (float64, (N, C, H, W) or (N, D)) of `request` (see the script's docstring: "op",
/// "x" as tensor_json, the layer's arguments, Keras-layout weights). ADD_FAILURE and an undefined tensor
/// when the script fails.
inline at::Tensor keras_reference(const nlohmann::json& request) {
  const nlohmann::json result = detail::run_keras_reference(request);
  return result.is_null() ? at::Tensor() : detail::reference_tensor(result["y"]);
}

/// The reference's gradients of sum(y · request["vjp"]) with respect to "x" and each weight named in
/// request["wrt"] (central differences of its float64 forward, see the script's numeric_vjp), by name.
/// Empty (after ADD_FAILURE) when the script fails.
inline std::map<std::string, at::Tensor> keras_reference_grads(const nlohmann::json& request) {
  const nlohmann::json result = detail::run_keras_reference(request);
  std::map<std::string, at::Tensor> grads;
  if (result.is_null()) return grads;
  for (const auto& [name, g] : result["grads"].items()) grads[name] = detail::reference_tensor(g);
  return grads;
}

/// Expects `actual` (float32) to equal the float64 `reference` within `atol` + 1e-5·|reference|.
inline void expect_matches_reference(const at::Tensor& actual, const at::Tensor& reference, double atol = 1e-5) {
  ASSERT_TRUE(reference.defined());
  ASSERT_EQ(actual.sizes(), reference.sizes());
  const at::Tensor diff = (actual.detach().to(at::kDouble) - reference).abs();
  const at::Tensor bound = atol + 1e-5 * reference.abs();
  EXPECT_TRUE((diff <= bound).all().item<bool>())
      << "max |difference| " << diff.max().item<double>() << " (reference max |y| "
      << reference.abs().max().item<double>() << ")";
}

}  // namespace torchfit::testing

/// Skips the test, with the reason, when the NumPy reference cannot run.
#define TORCHFIT_REQUIRE_KERAS_REFERENCE()                                    \
  do {                                                                        \
    const std::string why = torchfit::testing::keras_reference_unavailable(); \
    if (!why.empty()) GTEST_SKIP() << why;                                    \
  } while (0)

namespace torchfit::testing {

/// A random (N, C, H, W) batch for the Keras input (H, W, C) (seeded), and `layer`'s eval() output on it
/// alone in a Sequential: {x, y}.
template <typename LayerPtr>
std::pair<at::Tensor, at::Tensor> random_forward(LayerPtr layer, const std::vector<int64_t>& keras_in, int64_t n = 2,
                                                 uint64_t seed = 7) {
  at::manual_seed(seed);
  std::vector<int64_t> shape = keras_in;
  if (shape.size() == 3) shape = {keras_in[2], keras_in[0], keras_in[1]};
  shape.insert(shape.begin(), n);
  const at::Tensor x = at::randn(shape);
  layer->set_declared_input_shape(keras_in);
  Sequential m;
  m->add(layer);
  m->eval();
  at::NoGradGuard no_grad;
  return {x, m->forward(x)};
}

/// `layer`'s gradients against the reference's (keras_reference_grads): on a random batch of the Keras input
/// `keras_in` (eval mode, alone in a Sequential), the gradients of sum(y · r) for a random r, with respect to
/// the input and to every Keras weight, compared within 1e-5 + 1e-5·|reference|. `request` holds the
/// reference's "op" and the layer's arguments; the layer's keras_weights() go in as `weight_names` (in order:
/// all of them, e.g. {"kernel", "bias"}). A layer's parameter gradients are moved to Keras's layout by
/// its own keras_weights() (a linear re-layout) and the weights restored after.
template <typename LayerPtr>
void expect_gradients_match_reference(LayerPtr layer, const std::vector<int64_t>& keras_in, nlohmann::json request,
                                      const std::vector<std::string>& weight_names = {}, uint64_t seed = 5) {
  at::manual_seed(seed);
  std::vector<int64_t> shape = keras_in;
  if (shape.size() == 3) shape = {keras_in[2], keras_in[0], keras_in[1]};
  shape.insert(shape.begin(), 2);
  const at::Tensor x = at::randn(shape).requires_grad_(true);
  layer->set_declared_input_shape(keras_in);
  Sequential m;
  m->add(layer);
  m->eval();
  const at::Tensor y = m->forward(x);
  const at::Tensor r = at::randn_like(y);
  (y * r).sum().backward();
  const std::vector<at::Tensor> weights = layer->keras_weights();
  ASSERT_EQ(weights.size(), weight_names.size()) << "name every Keras weight of " << layer->keras_class_name;
  std::vector<at::Tensor> keras_grads;
  {
    at::NoGradGuard no_grad;
    for (auto& p : layer->named_parameters()) {
      if (p.value().grad().defined()) p.value().copy_(p.value().grad());
    }
    keras_grads = layer->keras_weights();
    layer->set_keras_weights(weights);
  }
  request["x"] = tensor_json(x);
  request["vjp"] = tensor_json(r);
  request["wrt"] = weight_names;
  for (size_t i = 0; i < weights.size(); ++i) request[weight_names[i]] = tensor_json(weights[i]);
  const std::map<std::string, at::Tensor> want = keras_reference_grads(request);
  ASSERT_EQ(want.size(), weights.size() + 1);
  {
    SCOPED_TRACE("input gradient");
    expect_matches_reference(x.grad(), want.at("x"));
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    SCOPED_TRACE(weight_names[i] + " gradient");
    expect_matches_reference(keras_grads[i], want.at(weight_names[i]));
  }
}

/// Keras 3's model.to_json() of a Sequential: an InputLayer of batch_shape (None, `shape`…) named "in", then
/// `layer` (Keras 3's serialization of one layer: module, class_name, config, registered_name).
inline nlohmann::json keras3_sequential_of(const std::vector<int64_t>& shape, const nlohmann::json& layer) {
  nlohmann::json batch_shape = nlohmann::json::array({nullptr});
  for (int64_t v : shape) batch_shape.push_back(v);
  const nlohmann::json input = {{"module", "keras.layers"},
                                {"class_name", "InputLayer"},
                                {"registered_name", nullptr},
                                {"config", {{"batch_shape", batch_shape}, {"dtype", "float32"}, {"name", "in"}}}};
  return {{"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", {input, layer}}}}};
}

/// One pooling configuration: the Keras input, pool size, strides (one per spatial axis) and padding.
struct PoolingCase {
  std::vector<int64_t> in, pool, strides;
  std::string padding;
};

/// A pooling layer of D spatial axes (`PoolingLayer`: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D) against the
/// reference's `op` ("max_pool", "avg_pool") for each of `cases`.
template <typename PoolingLayer, size_t D>
void expect_pooling_matches_tensorflow(const std::string& op, const std::vector<PoolingCase>& cases) {
  for (const PoolingCase& c : cases) {
    SCOPED_TRACE(c.padding + " input " + format_shape(c.in));
    PoolingLayer layer(PoolingOptions<D>(torch::ExpandingArray<D>(c.pool)).strides(c.strides).padding(c.padding));
    auto [x, y] = random_forward(layer.ptr(), c.in);
    const nlohmann::json req = {
        {"op", op}, {"x", tensor_json(x)}, {"pool_size", c.pool}, {"strides", c.strides}, {"padding", c.padding}};
    expect_matches_reference(y, keras_reference(req));
  }
}

/// A 2-D pooling layer (MaxPooling2D or AveragePooling2D) against the reference's `op`: odd sizes, strides 2
/// and (2, 3), "same" with the odd pixel after, and "valid".
template <typename PoolingLayer>
void expect_pooling_matches_tensorflow(const std::string& op) {
  expect_pooling_matches_tensorflow<PoolingLayer, 2>(op, {{{7, 9, 2}, {3, 3}, {2, 2}, "same"},
                                                          {{7, 9, 2}, {2, 2}, {2, 2}, "same"},
                                                          {{9, 8, 1}, {3, 2}, {2, 3}, "same"},
                                                          {{5, 7, 2}, {1, 1}, {2, 2}, "same"},
                                                          {{7, 9, 2}, {3, 3}, {2, 2}, "valid"}});
}

}  // namespace torchfit::testing
