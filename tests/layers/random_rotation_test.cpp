// RandomRotation (keras.layers.RandomRotation, Keras 3): at given angles, every fill mode and interpolation
// against the NumPy reference of Keras 3's rotation matrix (_compute_affine_matrix) and NumPy-backend
// affine_transform; angles drawn in [lower·360, upper·360) (a number and a pair); seeded; the input in
// inference; conformance; the Keras 3 config; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_rotation.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomRotation, ConformanceAndKerasDefaults) {
  torchfit::testing::expect_layer_conformance(
      RandomRotation(RandomRotationOptions(0.2)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  const RandomRotationOptions o(0.2);
  EXPECT_EQ(o.fill_mode(), "reflect");
  EXPECT_EQ(o.interpolation(), "bilinear");
  EXPECT_EQ(o.fill_value(), 0.0);
  EXPECT_EQ(keras_snake_case("RandomRotation"), "random_rotation");
}

TEST(RandomRotation, RotatesAtGivenAnglesAsKeras3ForEveryFillModeAndInterpolation) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 5, 7}, at::kDouble);
  const std::vector<double> angles = {33.0, -75.5,
                                      193.0};  // no sample exactly between two pixels (30°: sin = 0.5 gives ties)
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      RandomRotation layer(RandomRotationOptions(0.5).fill_mode(fill).interpolation(interp).fill_value(0.25));
      const at::Tensor t = RandomRotationImpl::rotation_transforms(at::tensor(angles, at::kDouble), 5, 7);
      const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_rotation"},
                                                                  {"x", tensor_json(x)},
                                                                  {"angles", angles},
                                                                  {"interpolation", interp},
                                                                  {"fill_mode", fill},
                                                                  {"fill_value", 0.25}});
      torchfit::testing::expect_matches_reference(layer->transform_images(x, t), want, 1e-9);
    }
  }
}

TEST(RandomRotation, DrawsAnglesInKerasRangeSeededIdentityInInference) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  torchfit::testing::expect_covers_range(RandomRotation(RandomRotationOptions(0.2))->draw_angles(20000, like), -72.0,
                                         72.0);
  torchfit::testing::expect_covers_range(RandomRotation(RandomRotationOptions({0.3, -0.1}))->draw_angles(20000, like),
                                         -36.0, 108.0);
  torchfit::testing::expect_covers_range(RandomRotation(RandomRotationOptions(-0.25))->draw_angles(20000, like), -90.0,
                                         90.0);
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5});
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomRotation(RandomRotationOptions(0.3)).ptr(); }, x);
}

TEST(RandomRotation, Keras3ConfigReachesTheLayer) {
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomRotationImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomRotation", "rot",
          {{"factor", {-0.1, 0.2}}, {"fill_mode", "constant"}, {"fill_value", 3.5}, {"interpolation", "nearest"}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{-0.1, 0.2}));
  EXPECT_EQ(layer->options.fill_mode(), "constant");
  EXPECT_EQ(layer->options.fill_value(), 3.5);
  EXPECT_EQ(layer->options.interpolation(), "nearest");
  EXPECT_EQ(layer->config()["factor"], nlohmann::json({-0.1, 0.2}));
  EXPECT_EQ(RandomRotation(RandomRotationOptions(0.2))->config()["factor"], nlohmann::json(0.2));
}

TEST(RandomRotation, BadArgumentsNameTheLayerAndValue) {
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomRotation(RandomRotationOptions(1.5).name("r")); },
                      "layer 'r' (RandomRotation): factor must be a number in [-1, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= -1, got 1.5");
  expect_config_error([] { RandomRotation(RandomRotationOptions({1.2, 2.0}).name("r")); }, "got [1.2, 2]");
  expect_config_error([] { RandomRotation(RandomRotationOptions(0.1).fill_mode("mirror").name("r")); },
                      "layer 'r' (RandomRotation): fill_mode must be 'reflect', 'wrap', 'constant' or 'nearest', got "
                      "'mirror'");
  expect_config_error([] { RandomRotation(RandomRotationOptions(0.1).interpolation("bicubic").name("r")); },
                      "layer 'r' (RandomRotation): interpolation must be 'nearest' or 'bilinear', got 'bicubic'");
  expect_config_error(
      [] {
        layer_from_json({{"class_name", "RandomRotation"}, {"config", {{"name", "r"}, {"factor", "big"}}}});
      },
      "layer 'r' (RandomRotation): field 'factor' has a bad value \"big\"");
  expect_config_error(
      [] {
        layer_from_json({{"class_name", "RandomRotation"}, {"config", {{"name", "r"}}}});
      },
      "layer 'r' (RandomRotation): missing field 'factor'");
  expect_config_error(
      [] {
        Sequential s;
        auto r = RandomRotation(RandomRotationOptions(0.1).name("r"));
        r->set_declared_input_shape(Shape{5, 2});
        s->add(r.ptr());
      },
      "layer 'r' (RandomRotation) expects a 3-D input (H, W, C), got (None, 5, 2)");
}
