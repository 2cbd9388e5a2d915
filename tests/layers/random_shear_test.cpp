// RandomShear (keras.layers.RandomShear, Keras 3): at given shears, every fill mode and interpolation against the
// NumPy reference of Keras 3's _get_shear_matrix and NumPy-backend affine_transform; shears drawn in Keras's
// ranges with one random sign per image for both; seeded; the input in inference; conformance; the Keras 3
// config; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_shear.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomShear, ConformanceAndKerasDefaults) {
  torchfit::testing::expect_layer_conformance(
      RandomShear(RandomShearOptions().x_factor(0.4).y_factor(0.3)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  const RandomShearOptions o;
  EXPECT_EQ(o.x_factor().values, std::vector<double>{0.0});
  EXPECT_EQ(o.y_factor().values, std::vector<double>{0.0});
  EXPECT_EQ(o.fill_mode(), "reflect");
  EXPECT_EQ(o.interpolation(), "bilinear");
}

TEST(RandomShear, ShearsAtGivenFactorsAsKeras3ForEveryFillModeAndInterpolation) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 5, 7}, at::kDouble);
  const std::vector<double> sx = {0.37, -0.81, 0.0}, sy = {-0.23, 0.55, 0.93};
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      RandomShear layer(RandomShearOptions().x_factor(1.0).fill_mode(fill).interpolation(interp).fill_value(0.5));
      const at::Tensor t = RandomShearImpl::shear_transforms(at::tensor(sx, at::kDouble), at::tensor(sy, at::kDouble));
      const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_shear"},
                                                                  {"x", tensor_json(x)},
                                                                  {"shear_x", sx},
                                                                  {"shear_y", sy},
                                                                  {"interpolation", interp},
                                                                  {"fill_mode", fill},
                                                                  {"fill_value", 0.5}});
      torchfit::testing::expect_matches_reference(layer->transform_images(x, t), want, 1e-9);
    }
  }
}

TEST(RandomShear, DrawsShearsInKerasRangeWithOneSignPerImageSeededIdentityInInference) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  const at::Tensor s =
      RandomShear(RandomShearOptions().x_factor(KerasFactor(0.2, 0.6)).y_factor(0.3))->draw_shears(20000, like);
  const at::Tensor sign = at::sign(s.select(1, 0));
  torchfit::testing::expect_covers_range(s.select(1, 0).abs(), 0.2, 0.6);
  torchfit::testing::expect_covers_range(s.select(1, 1) * sign, -0.3, 0.3);  // the sign undone
  EXPECT_NEAR((sign < 0).to(at::kDouble).mean().item<double>(), 0.5, 0.02) << "share of negated shears";
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5});
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomShear(RandomShearOptions().x_factor(0.5).y_factor(0.5)).ptr(); }, x);
}

TEST(RandomShear, Keras3ConfigReachesTheLayer) {
  const auto layer = torchfit::testing::layer_from_keras3<RandomShearImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomShear", "shear",
                                                   {{"x_factor", {0.1, 0.4}},
                                                    {"y_factor", 0.2},
                                                    {"fill_mode", "constant"},
                                                    {"fill_value", 1.0},
                                                    {"interpolation", "bilinear"}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.x_factor().values, (std::vector<double>{0.1, 0.4}));
  EXPECT_EQ(layer->options.y_factor().values, (std::vector<double>{0.2}));
  EXPECT_EQ(layer->options.fill_mode(), "constant");
  EXPECT_EQ(layer->options.fill_value(), 1.0);
}

TEST(RandomShear, BadArgumentsNameTheLayerAndValue) {
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomShear(RandomShearOptions().x_factor(-0.1).name("s")); },
                      "layer 's' (RandomShear): x_factor must be a number or a pair of numbers in [0, 1], got -0.1");
  expect_config_error(
      [] { RandomShear(RandomShearOptions().y_factor(KerasFactor(0.5, 1.1)).name("s")); },
      "layer 's' (RandomShear): y_factor must be a number or a pair of numbers in [0, 1], got [0.5, 1.1]");
  expect_config_error([] { RandomShear(RandomShearOptions().fill_mode("mirror").name("s")); }, "got 'mirror'");
}
