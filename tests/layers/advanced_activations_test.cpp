// LeakyReLU (Keras alpha 0.3), ELU (alpha 1.0), and the elu/gelu activation names (gelu exact, Keras
// approximate=False): known values, Keras auto-names, conformance.
#include <gtest/gtest.h>

#include <cmath>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {
at::Tensor run(std::shared_ptr<Layer> layer, const at::Tensor& x) {
  layer->build({x.size(1)});
  return layer->forward(x);
}
at::Tensor x4() { return at::tensor({-2.0f, -1.0f, 0.0f, 1.5f}).reshape({1, 4}); }
}  // namespace

TEST(LeakyReLU, KerasDefaultAlphaIsPointThree) {
  LeakyReLU l;
  EXPECT_DOUBLE_EQ(l->options.alpha(), 0.3);
  auto y = run(l.ptr(), x4());
  EXPECT_TRUE(at::allclose(y, at::tensor({-0.6f, -0.3f, 0.0f, 1.5f}).reshape({1, 4}))) << y;
  auto y2 = run(LeakyReLU(LeakyReLUOptions().alpha(0.1)).ptr(), x4());
  EXPECT_NEAR(y2[0][0].item<double>(), -0.2, 1e-6);
  EXPECT_THROW(LeakyReLU(LeakyReLUOptions().alpha(-1)), ConfigError);
}

TEST(ELU, KerasDefaultAlphaIsOne) {
  ELU l;
  EXPECT_DOUBLE_EQ(l->options.alpha(), 1.0);
  auto y = run(l.ptr(), x4());
  EXPECT_NEAR(y[0][0].item<double>(), std::exp(-2.0) - 1.0, 1e-6);
  EXPECT_NEAR(y[0][1].item<double>(), std::exp(-1.0) - 1.0, 1e-6);
  EXPECT_FLOAT_EQ(y[0][3].item<float>(), 1.5f);
  auto y2 = run(ELU(ELUOptions().alpha(2.0)).ptr(), x4());
  EXPECT_NEAR(y2[0][1].item<double>(), 2.0 * (std::exp(-1.0) - 1.0), 1e-6);
}

TEST(Activation, GeluIsTheExactErfForm) {
  // Keras gelu(approximate=False): 0.5·x·(1 + erf(x/√2)); gelu(1) = 0.8413447, the tanh form gives 0.8411920.
  auto y = run(Activation("gelu").ptr(), x4());
  for (int i = 0; i < 4; ++i) {
    const double x = x4()[0][i].item<double>();
    EXPECT_NEAR(y[0][i].item<double>(), 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))), 1e-6);
  }
  auto one = run(Activation("gelu").ptr(), at::ones({1, 1}));
  EXPECT_NEAR(one.item<double>(), 0.8413447, 1e-6);
  auto e = run(Activation("elu").ptr(), x4());
  EXPECT_NEAR(e[0][1].item<double>(), std::exp(-1.0) - 1.0, 1e-6);
  // Usable as any layer's activation.
  Sequential m;
  m->add(Dense(DenseOptions(3).activation("gelu").input_shape(Shape{2})));
  EXPECT_EQ(m->output_activation(), "gelu");
}

TEST(AdvancedActivations, NamesAndConformance) {
  Sequential m;
  m->add(LeakyReLU(LeakyReLUOptions().input_shape(Shape{3})));
  m->add(ELU());
  m->add(LeakyReLU());
  EXPECT_EQ(m->layers()[0]->name(), "leaky_re_lu");  // Keras's to_snake_case("LeakyReLU")
  EXPECT_EQ(m->layers()[1]->name(), "elu");
  EXPECT_EQ(m->layers()[2]->name(), "leaky_re_lu_1");
  expect_layer_conformance(LeakyReLU().ptr(), LayerConformance({4, 4, 2}, {4, 4, 2}));
  expect_layer_conformance(ELU(ELUOptions().alpha(0.5)).ptr(), LayerConformance({7}, {7}));
  expect_layer_conformance(Activation("gelu").ptr(), LayerConformance({3, 3, 1}, {3, 3, 1}));
}
