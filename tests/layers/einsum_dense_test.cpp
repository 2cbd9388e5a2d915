// EinsumDense: Keras's kernel and bias shapes from the equation, the forward and its gradients (input and
// kernel) against NumPy's einsum in float64 for Keras's three equation forms and images in and out,
// conformance, and the bad equations / output shapes refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/einsum_dense.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

struct EinsumCase {
  std::string equation;
  EinsumOutputShape output_shape;
  std::optional<std::string> bias_axes;
  Shape in, out, kernel, bias;
};

// Shapes as Keras's _analyze_einsum_string gives them (keras/src/layers/core/einsum_dense.py).
std::vector<EinsumCase> cases() {
  using O = std::vector<std::optional<int64_t>>;
  return {
      {"...b,bc->...c", 4, "c", {3}, {4}, {3, 4}, {4}},
      {"...b,bc->...c", 4, "c", {5, 3}, {5, 4}, {3, 4}, {4}},
      {"abc,cd->abd", O{std::nullopt, 4}, "d", {5, 3}, {5, 4}, {3, 4}, {4}},
      {"abc,cde->abde", O{std::nullopt, 2, 3}, "de", {5, 3}, {5, 2, 3}, {3, 2, 3}, {2, 3}},  // an image out
      {"abc,cde->abde", O{std::nullopt, 2, 3}, "d", {5, 3}, {5, 2, 3}, {3, 2, 3}, {2, 1}},
      {"abcd,cde->abe", O{std::nullopt, 4}, "e", {2, 3, 4}, {2, 4}, {3, 4, 4}, {4}},  // an image in
      {"abcd,de->abce", O{std::nullopt, std::nullopt, 5}, "e", {2, 3, 4}, {2, 3, 5}, {4, 5}, {5}},
      {"ab...,bc->ac...", 4, "c", {3, 5}, {4, 5}, {3, 4}, {4, 1}},  // "..." on the right
      {"abc,cd->abd", O{5, 4}, std::nullopt, {5, 3}, {5, 4}, {3, 4}, {}},
  };
}

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

EinsumDense make(const EinsumCase& c) {
  EinsumDenseOptions o(c.equation, c.output_shape);
  o.bias_axes(c.bias_axes);
  return EinsumDense(o);
}

// The layer of `c`, built for its input.
EinsumDense built(const EinsumCase& c) {
  EinsumDense layer = make(c);
  layer->set_declared_input_shape(c.in);
  Sequential m;
  m->add(layer);
  return layer;
}

}  // namespace

TEST(EinsumDense, KernelBiasAndOutputShapesAreKeras) {
  for (const EinsumCase& c : cases()) {
    SCOPED_TRACE(c.equation + " " + format_shape(c.in));
    EinsumDense layer = built(c);
    EXPECT_EQ(layer->output_shape(), c.out);
    EXPECT_EQ(layer->kernel.sizes().vec(), c.kernel);
    EXPECT_EQ(layer->bias.defined() ? layer->bias.sizes().vec() : Shape{}, c.bias);
    EXPECT_EQ(layer->count_params(), numel(c.kernel) + (c.bias_axes ? numel(c.bias) : 0));
  }
}

// Keras 3's EinsumDense.call: ops.einsum(equation, inputs, kernel) + bias, and d/dx, d/dkernel of
// sum(g · y), against NumPy's einsum in float64 (tests/layers/reference/keras_layers_reference.py).
TEST(EinsumDense, MatchesNumpyEinsumAndItsGradients) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const EinsumCase& c : cases()) {
    SCOPED_TRACE(c.equation + " " + format_shape(c.in));
    EinsumDense layer = built(c);
    at::manual_seed(3);
    if (layer->bias.defined()) layer->bias.data().copy_(at::randn(c.bias));
    Shape x_shape = to_tensor_shape(c.in);
    x_shape.insert(x_shape.begin(), 3);
    const at::Tensor x = at::randn(x_shape).requires_grad_(true);
    const at::Tensor y = layer->forward(x);
    const at::Tensor g = at::randn_like(y);
    (y * g).sum().backward();
    const auto json = [](const at::Tensor& t) { return torchfit::testing::tensor_json(t); };
    nlohmann::json req = {{"op", "einsum"}, {"x", json(x)}, {"equation", c.equation}, {"kernel", json(layer->kernel)}};
    if (layer->bias.defined()) req["bias"] = json(layer->bias);
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
    req["op"] = "einsum_grad";
    req["grad_y"] = json(g);
    torchfit::testing::expect_matches_reference(at::cat({x.grad().reshape(-1), layer->kernel.grad().reshape(-1)}),
                                                torchfit::testing::keras_reference(req), 1e-4);
  }
}

TEST(EinsumDense, Conforms) {
  for (const EinsumCase& c : cases()) {
    SCOPED_TRACE(c.equation + " " + format_shape(c.in));
    expect_layer_conformance(
        make(c).ptr(),
        LayerConformance(c.in, c.out).trainable_params(numel(c.kernel) + (c.bias_axes ? numel(c.bias) : 0)));
  }
  EinsumDenseOptions relu("...b,bc->...c", 3);
  expect_layer_conformance(EinsumDense(relu.activation("relu")).ptr(), LayerConformance({4}, {3}).trainable_params(12));
}

TEST(EinsumDense, ConfigIsKeras3s) {
  const nlohmann::json config = {{"name", "ed"},         {"equation", "abc,cd->abd"}, {"output_shape", {nullptr, 4}},
                                 {"activation", "relu"}, {"bias_axes", "d"},          {"input_shape", {5, 3}}};
  const auto layer = layer_from_json({{"class_name", "EinsumDense"}, {"config", config}});
  EXPECT_EQ(layer->config(), config);
  const auto from_int = layer_from_json(
      {{"class_name", "EinsumDense"}, {"config", {{"equation", "...b,bc->...c"}, {"output_shape", 4}}}});
  EXPECT_EQ(from_int->config()["output_shape"], nlohmann::json::array({4}));
  EXPECT_TRUE(from_int->config()["bias_axes"].is_null());
}

TEST(EinsumDense, BadEquationsAndShapesAreRefusedNamingTheLayer) {
  using O = std::vector<std::optional<int64_t>>;
  const std::vector<std::tuple<std::string, EinsumOutputShape, std::optional<std::string>, Shape, std::string>> bad = {
      {"ab->b", 4, std::nullopt, {3}, "equation"},
      {"ab,bc->ad", 4, std::nullopt, {3}, "'d'"},
      {"ab,bz->ab", O{std::nullopt}, std::nullopt, {3}, "'z'"},
      {"ab,bc->ac", 4, "x", {3}, "bias_axes"},
      {"abc,cd->abd", 4, std::nullopt, {5, 3}, "output_shape"},
      {"abc,cd->abd", O{6, 4}, std::nullopt, {5, 3}, "input's 5"},
      {"ab,bc->ac", O{std::nullopt}, std::nullopt, {3}, "unknown"},
      {"abc,cd->abd", O{std::nullopt, 4}, std::nullopt, {3}, "axes"},
      {"ab,bc->bc", 4, std::nullopt, {3}, "batch"},
  };
  for (const auto& [equation, output_shape, bias_axes, in, what] : bad) {
    SCOPED_TRACE(equation);
    try {
      EinsumDenseOptions o(equation, output_shape);
      o.bias_axes(bias_axes);
      Sequential m;
      EinsumDense layer(o);
      layer->set_declared_input_shape(in);
      m->add(layer);
      ADD_FAILURE() << "accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("(EinsumDense)"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(EinsumDense(EinsumDenseOptions("ab,bc->ac", 0)), ConfigError);
  EXPECT_THROW(EinsumDense(EinsumDenseOptions("ab,bc->ac", 4).activation("relu7")), ConfigError);
  EXPECT_THROW(
      layer_from_json({{"class_name", "EinsumDense"}, {"config", {{"equation", "ab,bc->ac"}, {"output_shape", "4"}}}}),
      ConfigError);
}
