// RandomTranslation (keras.layers.RandomTranslation, Keras 3): at given shifts, every fill mode and interpolation
// against the NumPy reference of Keras 3's _get_translation_matrix (fraction × size) and NumPy-backend
// affine_transform; shifts drawn in Keras's ranges; seeded; the input in inference; conformance; the Keras 3
// config; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_translation.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomTranslation, ConformanceAndKerasDefaults) {
  torchfit::testing::expect_layer_conformance(
      RandomTranslation(RandomTranslationOptions(0.3, 0.3)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  const RandomTranslationOptions o(0.2, 0.1);
  EXPECT_EQ(o.fill_mode(), "reflect");
  EXPECT_EQ(o.interpolation(), "bilinear");
  EXPECT_EQ(o.fill_value(), 0.0);
}

TEST(RandomTranslation, ShiftsAtGivenFractionsAsKeras3ForEveryFillModeAndInterpolation) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 5, 7}, at::kDouble);
  // Sub-pixel, whole-pixel and beyond-the-image shifts (fy·5, fx·7 pixels).
  const std::vector<double> fy = {0.13, -0.4, 0.97}, fx = {-0.27, 1.0 / 7.0, -0.91};
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      RandomTranslation layer(RandomTranslationOptions(1.0, 1.0).fill_mode(fill).interpolation(interp).fill_value(2.0));
      const at::Tensor t =
          RandomTranslationImpl::translation_transforms(at::tensor(fy, at::kDouble), at::tensor(fx, at::kDouble), 5, 7);
      const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_translation"},
                                                                  {"x", tensor_json(x)},
                                                                  {"height_translate", fy},
                                                                  {"width_translate", fx},
                                                                  {"interpolation", interp},
                                                                  {"fill_mode", fill},
                                                                  {"fill_value", 2.0}});
      torchfit::testing::expect_matches_reference(layer->transform_images(x, t), want, 1e-9);
    }
  }
}

TEST(RandomTranslation, DrawsShiftsInKerasRangeSeededIdentityInInference) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  const at::Tensor t = RandomTranslation(RandomTranslationOptions({-0.1, 0.3}, 0.2))->draw_translations(20000, like);
  torchfit::testing::expect_covers_range(t.select(1, 0), -0.1, 0.3);
  torchfit::testing::expect_covers_range(t.select(1, 1), -0.2, 0.2);
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5});
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomTranslation(RandomTranslationOptions(0.3, 0.3)).ptr(); }, x);
}

TEST(RandomTranslation, Keras3ConfigReachesTheLayer) {
  const auto layer = torchfit::testing::layer_from_keras3<RandomTranslationImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomTranslation", "shift",
                                                   {{"height_factor", 0.1},
                                                    {"width_factor", {-0.2, 0.0}},
                                                    {"fill_mode", "nearest"},
                                                    {"fill_value", 0.0},
                                                    {"interpolation", "nearest"}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.height_factor().values, (std::vector<double>{0.1}));
  EXPECT_EQ(layer->options.width_factor().values, (std::vector<double>{-0.2, 0.0}));
  EXPECT_EQ(layer->options.fill_mode(), "nearest");
  EXPECT_EQ(layer->options.interpolation(), "nearest");
}

TEST(RandomTranslation, BadArgumentsNameTheLayerAndValue) {
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomTranslation(RandomTranslationOptions(1.2, 0.1).name("t")); },
                      "layer 't' (RandomTranslation): height_factor must be a number or a pair of numbers in [-1, 1], "
                      "got 1.2");
  expect_config_error(
      [] {
        RandomTranslation(RandomTranslationOptions(0.1, {-1.5, 0.0}).name("t"));
      },
      "width_factor must be a number or a pair of numbers in [-1, 1], got [-1.5, 0]");
  expect_config_error([] { RandomTranslation(RandomTranslationOptions(0.1, 0.1).interpolation("area").name("t")); },
                      "layer 't' (RandomTranslation): interpolation must be 'nearest' or 'bilinear', got 'area'");
  expect_config_error(
      [] {
        layer_from_json({{"class_name", "RandomTranslation"}, {"config", {{"name", "t"}, {"height_factor", 0.1}}}});
      },
      "layer 't' (RandomTranslation): missing field 'width_factor'");
}
