// ThresholdedReLU (tf.keras 2): values and gradients against NumPy's x·(x > theta), conformance, theta < 0.
#include <gtest/gtest.h>

#include <torchfit/layers/advanced_activations.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/layer_checks.h"
#include "support/python_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

// tf.keras 2.15 (keras/layers/activation/thresholded_relu.py): inputs · cast(inputs > theta); at x = theta
// the output is 0. The gradient is the same mask.
TEST(ThresholdedReLU, MatchesNumpyAtAndAroundTheta) {
  const at::Tensor x =
      at::tensor({-2.0, -1.0, 0.0, 0.25, 0.5, 0.999, 1.0, 1.001, 2.0, 3.5}, at::kDouble).reshape({2, 5});
  for (const double theta : {1.0, 0.0, 0.5}) {
    const auto ref =
        torchfit::testing::run_python({"numpy"},
                                      "x = numpy.array(data['x'])\nmask = (x > data['theta']).astype(float)\n"
                                      "out = {'y': (x * mask).flatten().tolist(), 'mask': mask.flatten().tolist()}",
                                      {{"x", torchfit::testing::to_json(x)}, {"theta", theta}});
    TORCHFIT_REQUIRE_PYTHON(ref);
    const at::Tensor want = at::tensor(ref.out["y"].get<std::vector<double>>(), at::kDouble);
    const at::Tensor mask = at::tensor(ref.out["mask"].get<std::vector<double>>(), at::kDouble);
    ThresholdedReLU layer(ThresholdedReLUOptions().theta(theta));
    layer->build({5});
    const at::Tensor xg = x.clone().requires_grad_(true);
    const at::Tensor y = layer->forward(xg);
    y.sum().backward();
    EXPECT_TRUE(at::equal(y.detach().flatten(), want)) << "theta " << theta << ": " << y;
    EXPECT_TRUE(at::equal(xg.grad().flatten(), mask)) << "theta " << theta << ": " << xg.grad();
  }
}

TEST(ThresholdedReLU, ConformsWithKerasDefaultThetaOne) {
  ThresholdedReLU l;
  EXPECT_DOUBLE_EQ(l->options.theta(), 1.0);
  expect_layer_conformance(ThresholdedReLU().ptr(), LayerConformance({3, 4, 2}, {3, 4, 2}));
  expect_layer_conformance(ThresholdedReLU(ThresholdedReLUOptions().theta(0.3)).ptr(), LayerConformance({6}, {6}));
  Sequential m;
  m->add(ThresholdedReLU(ThresholdedReLUOptions().input_shape(Shape{3})));
  EXPECT_EQ(m->layers()[0]->name(), "thresholded_re_lu");  // Keras's to_snake_case("ThresholdedReLU")
}

TEST(ThresholdedReLU, NegativeThetaIsAConfigErrorNamingTheLayer) {
  try {
    ThresholdedReLU l(ThresholdedReLUOptions().theta(-0.5).name("th"));
    FAIL() << "theta -0.5 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'th' (ThresholdedReLU): theta must be >= 0, got -0.5"),
              std::string::npos)
        << e.what();
  }
  const std::string msg =
      torchfit::testing::layer_config_error({{"class_name", "ThresholdedReLU"}, {"config", {{"theta", -1.0}}}});
  EXPECT_NE(msg.find("theta must be >= 0"), std::string::npos) << msg;
}
