// RandomContrast, RandomBrightness and RandomGrayscale (Keras 3): at given draws, against the NumPy reference
// written from Keras 3's transform_images (keras_image_augmentation_reference.py); draws in Keras's ranges
// (RandomContrast's [1 − lower, 1 + upper) with a number's lower = 0, as Keras 3's code); seeded; the input in
// inference; conformance; Keras 3 configs; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_grayscale.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomContrast, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomContrast(RandomContrastOptions(0.5)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomContrastOptions(0.2).value_range(), (std::vector<double>{0.0, 255.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 4, 5}, at::kDouble) * 255.0;
  const std::vector<double> factors = {0.4, 1.0, 1.9};  // 1.9 pushes values past [0, 255]: clipped
  RandomContrast layer(RandomContrastOptions(0.5));
  const at::Tensor want = torchfit::testing::keras_reference(
      {{"op", "augment_contrast"}, {"x", tensor_json(x)}, {"factors", factors}, {"value_range", {0.0, 255.0}}});
  torchfit::testing::expect_matches_reference(layer->adjust(x, at::tensor(factors, at::kDouble)), want, 1e-9);
  RandomContrast unit(RandomContrastOptions(0.5).value_range({0.2, 0.7}));
  const at::Tensor small = x / 255.0;
  const at::Tensor want_unit = torchfit::testing::keras_reference(
      {{"op", "augment_contrast"}, {"x", tensor_json(small)}, {"factors", factors}, {"value_range", {0.2, 0.7}}});
  torchfit::testing::expect_matches_reference(unit->adjust(small, at::tensor(factors, at::kDouble)), want_unit, 1e-9);
}

TEST(RandomContrast, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  torchfit::testing::expect_covers_range(RandomContrast(RandomContrastOptions(0.3))->draw_factors(20000, like), 1.0,
                                         1.3);
  torchfit::testing::expect_covers_range(RandomContrast(RandomContrastOptions({0.4, 0.2}))->draw_factors(20000, like),
                                         0.8, 1.4);
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5}) * 255.0;
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomContrast(RandomContrastOptions(0.5)).ptr(); }, x);
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomContrastImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomContrast", "c", {{"factor", {0.0, 0.3}}, {"value_range", {0, 1}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.0, 0.3}));
  EXPECT_EQ(layer->options.value_range(), (std::vector<double>{0.0, 1.0}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomContrast(RandomContrastOptions(1.5).name("c")); },
                      "layer 'c' (RandomContrast): factor must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got 1.5");
  expect_config_error([] { RandomContrast(RandomContrastOptions(-0.1).name("c")); }, "got -0.1");
  expect_config_error([] { RandomContrast(RandomContrastOptions(0.1).value_range({0.0}).name("c")); },
                      "layer 'c' (RandomContrast): value_range must be two numbers [low, high], got [0]");
}

TEST(RandomBrightness, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomBrightness(RandomBrightnessOptions(0.5)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomBrightnessOptions(0.2).value_range(), (std::vector<double>{0.0, 255.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({3, 2, 4, 5}, at::kDouble);
  const std::vector<double> deltas = {-0.35, 0.05, 0.6};
  RandomBrightness layer(RandomBrightnessOptions(0.5).value_range({1.0, 0.0}));  // sorted, as Keras
  const at::Tensor want = torchfit::testing::keras_reference(
      {{"op", "augment_brightness"}, {"x", tensor_json(x)}, {"deltas", deltas}, {"value_range", {1.0, 0.0}}});
  torchfit::testing::expect_matches_reference(layer->adjust(x, at::tensor(deltas, at::kDouble)), want, 1e-12);
}

TEST(RandomBrightness, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  // factor 0.2 of value_range [0, 255]: deltas in [-51, 51); a pair [-0.1, 0.3] of [0, 1]: [-0.1, 0.3).
  torchfit::testing::expect_covers_range(RandomBrightness(RandomBrightnessOptions(0.2))->draw_deltas(20000, like),
                                         -51.0, 51.0);
  torchfit::testing::expect_covers_range(
      RandomBrightness(RandomBrightnessOptions({0.3, -0.1}).value_range({0.0, 1.0}))->draw_deltas(20000, like), -0.1,
      0.3);
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5}) * 255.0;
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomBrightness(RandomBrightnessOptions(0.3)).ptr(); }, x);
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomBrightnessImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomBrightness", "b", {{"factor", {-0.2, 0.2}}, {"value_range", {0.0, 1.0}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{-0.2, 0.2}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomBrightness(RandomBrightnessOptions(-1.2).name("b")); },
                      "layer 'b' (RandomBrightness): factor must be a number in [-1, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= -1, got -1.2");
  expect_config_error(
      [] {
        RandomBrightness(RandomBrightnessOptions(0.1).value_range({0.0, 1.0, 2.0}).name("b"));
      },
      "layer 'b' (RandomBrightness): value_range must be two numbers [low, high], got [0, 1, 2]");
  expect_config_error(
      [] {
        layer_from_json(
            {{"class_name", "RandomBrightness"}, {"config", {{"name", "b"}, {"factor", 0.1}, {"value_range", 255}}}});
      },
      "layer 'b' (RandomBrightness): field 'value_range' must be a list of numbers, got 255");
}

TEST(RandomGrayscale, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomGrayscale(RandomGrayscaleOptions().factor(1.0)).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomGrayscaleOptions().factor(), 0.5);
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const std::vector<bool> applies = {true, false, true};
  const at::Tensor mask = at::tensor({1, 0, 1}).to(at::kBool);
  for (int64_t c : {3, 1}) {
    SCOPED_TRACE(c);
    const at::Tensor x = at::rand({3, c, 4, 5}, at::kDouble);
    const at::Tensor want =
        torchfit::testing::keras_reference({{"op", "augment_grayscale"}, {"x", tensor_json(x)}, {"applies", applies}});
    torchfit::testing::expect_matches_reference(RandomGrayscale()->apply(x, mask), want, 1e-12);
  }
}

TEST(RandomGrayscale, DrawsAtTheFactorsRateSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  const double share = RandomGrayscale(RandomGrayscaleOptions().factor(0.3))
                           ->draw_applies(20000, like)
                           .to(at::kDouble)
                           .mean()
                           .item<double>();
  EXPECT_NEAR(share, 0.3, 0.015);
  EXPECT_FALSE(RandomGrayscale(RandomGrayscaleOptions().factor(0.0))->draw_applies(1000, like).any().item<bool>());
  at::manual_seed(8);
  const at::Tensor x = at::rand({16, 3, 6, 5});
  torchfit::testing::expect_seeded_and_inference_identity([] { return RandomGrayscale().ptr(); }, x);
  const auto layer = torchfit::testing::layer_from_keras3<RandomGrayscaleImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomGrayscale", "g", {{"factor", 0.25}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor(), 0.25);
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomGrayscale(RandomGrayscaleOptions().factor(1.5).name("g")); },
                      "layer 'g' (RandomGrayscale): factor must be in [0, 1], got 1.5");
  expect_config_error(
      [] {
        Sequential s;
        auto g = RandomGrayscale(RandomGrayscaleOptions().name("g"));
        g->set_declared_input_shape(Shape{5, 7, 2});
        s->add(g.ptr());
      },
      "layer 'g' (RandomGrayscale) expects 1 or 3 channels (RGB or grayscale), got");
}
