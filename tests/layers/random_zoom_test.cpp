// RandomZoom (keras.layers.RandomZoom, Keras 3): at given zooms, every fill mode and interpolation against the
// NumPy reference of Keras 3's _get_zoom_matrix and NumPy-backend affine_transform; zooms drawn in
// [1 + lower, 1 + upper) (the width's equal to the height's without width_factor); seeded; the input in
// inference; conformance; the Keras 3 config; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_zoom.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomZoom, ConformanceAndKerasDefaults) {
  torchfit::testing::expect_layer_conformance(
      RandomZoom(RandomZoomOptions(0.3)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  const RandomZoomOptions o(0.2);
  EXPECT_FALSE(o.width_factor());
  EXPECT_EQ(o.fill_mode(), "reflect");
  EXPECT_EQ(o.interpolation(), "bilinear");
  EXPECT_EQ(o.fill_value(), 0.0);
}

TEST(RandomZoom, ZoomsAtGivenFactorsAsKeras3ForEveryFillModeAndInterpolation) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 6, 7}, at::kDouble);
  const std::vector<double> zy = {0.63, 1.37, 1.9}, zx = {0.71, 1.23, 0.55};
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      RandomZoom layer(RandomZoomOptions(0.5).fill_mode(fill).interpolation(interp).fill_value(-1.0));
      const at::Tensor t =
          RandomZoomImpl::zoom_transforms(at::tensor(zy, at::kDouble), at::tensor(zx, at::kDouble), 6, 7);
      const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_zoom"},
                                                                  {"x", tensor_json(x)},
                                                                  {"height_zoom", zy},
                                                                  {"width_zoom", zx},
                                                                  {"interpolation", interp},
                                                                  {"fill_mode", fill},
                                                                  {"fill_value", -1.0}});
      torchfit::testing::expect_matches_reference(layer->transform_images(x, t), want, 1e-9);
    }
  }
}

TEST(RandomZoom, DrawsZoomsInKerasRangeSeededIdentityInInference) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  const at::Tensor same = RandomZoom(RandomZoomOptions(0.2))->draw_zooms(20000, like);
  torchfit::testing::expect_covers_range(same.select(1, 0), 0.8, 1.2);
  EXPECT_TRUE(at::equal(same.select(1, 0), same.select(1, 1))) << "no width_factor: zx = zy";
  const at::Tensor both =
      RandomZoom(RandomZoomOptions({0.1, -0.3}).width_factor(KerasFactor(0.5)))->draw_zooms(20000, like);
  torchfit::testing::expect_covers_range(both.select(1, 0), 0.7, 1.1);
  torchfit::testing::expect_covers_range(both.select(1, 1), 0.5, 1.5);
  EXPECT_FALSE(at::equal(both.select(1, 0), both.select(1, 1)));
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5});
  torchfit::testing::expect_seeded_and_inference_identity([] { return RandomZoom(RandomZoomOptions(0.3)).ptr(); }, x);
}

TEST(RandomZoom, Keras3ConfigReachesTheLayer) {
  const auto layer = torchfit::testing::layer_from_keras3<RandomZoomImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomZoom", "zoom",
                                                   {{"height_factor", {-0.2, 0.3}},
                                                    {"width_factor", 0.1},
                                                    {"fill_mode", "wrap"},
                                                    {"fill_value", 0.0},
                                                    {"interpolation", "bilinear"}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.height_factor().values, (std::vector<double>{-0.2, 0.3}));
  ASSERT_TRUE(layer->options.width_factor());
  EXPECT_EQ(layer->options.width_factor()->values, (std::vector<double>{0.1}));
  EXPECT_EQ(layer->options.fill_mode(), "wrap");
  const auto plain = torchfit::testing::layer_from_keras3<RandomZoomImpl>(torchfit::testing::keras3_augmentation_layer(
      "RandomZoom", "zoom", {{"height_factor", 0.2}, {"width_factor", nullptr}}));
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->options.width_factor());
  EXPECT_TRUE(plain->config()["width_factor"].is_null());
}

TEST(RandomZoom, BadArgumentsNameTheLayerAndValue) {
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomZoom(RandomZoomOptions(-1.0).name("z")); },
                      "layer 'z' (RandomZoom): height_factor must be a number or a pair of numbers in (-1, 1], got -1");
  expect_config_error([] { RandomZoom(RandomZoomOptions(0.1).width_factor(KerasFactor(0.2, 1.5)).name("z")); },
                      "layer 'z' (RandomZoom): width_factor must be a number or a pair of numbers in (-1, 1], got "
                      "[0.2, 1.5]");
  expect_config_error([] { RandomZoom(RandomZoomOptions(0.1).fill_mode("edge").name("z")); }, "got 'edge'");
  expect_config_error(
      [] {
        layer_from_json(
            {{"class_name", "RandomZoom"}, {"config", {{"name", "z"}, {"height_factor", {0.1, 0.2, 0.3}}}}});
      },
      "layer 'z' (RandomZoom): field 'height_factor' has a bad value [0.1,0.2,0.3]");
}
