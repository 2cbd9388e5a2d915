#pragma once
// Independent float64 references of Keras layers: tests/layers/reference/keras_layers_reference.py (NumPy,
// written from TensorFlow's/Keras's definitions) run through /usr/bin/python3.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

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

/// The reference output (float64, (N, C, H, W) or (N, D)) of `request` (see the script's docstring: "op",
/// "x" as tensor_json, the layer's arguments, Keras-layout weights). ADD_FAILURE and an undefined tensor
/// when the script fails.
inline at::Tensor keras_reference(const nlohmann::json& request) {
  TempDir dir("keras_ref");
  const std::string in = dir.file("request.json"), out = dir.file("result.json");
  std::ofstream(in) << request.dump();
  const std::string script = std::string(TORCHFIT_SOURCE_DIR) + "/tests/layers/reference/keras_layers_reference.py";
  const std::string cmd = "/usr/bin/python3 '" + script + "' '" + in + "' '" + out + "'";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "reference failed: " << cmd;
    return {};
  }
  nlohmann::json result;
  std::ifstream(out) >> result;
  const auto& y = result["y"];
  return at::tensor(y["data"].get<std::vector<double>>(), at::kDouble).reshape(y["shape"].get<std::vector<int64_t>>());
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
