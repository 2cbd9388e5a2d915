// RandomHue, RandomSaturation and RandomColorJitter (Keras 3): at given draws, against the NumPy reference written
// from Keras 3's transform_images and its NumPy backend's rgb_to_hsv / hsv_to_rgb
// (keras_image_augmentation_reference.py); draws in Keras's ranges (RandomSaturation's base _FACTOR_BOUNDS
// (−1, 1), as Keras 3's code); seeded; the input in inference; conformance; Keras 3 configs; errors naming the
// layer and value; RandomColorJitter as its steps in Keras's order.
#include <gtest/gtest.h>

#include <torchfit/layers/random_color_jitter.h>
#include <torchfit/layers/random_hue.h>
#include <torchfit/layers/random_saturation.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

// Images (N, 3, H, W) in [0, 255] with grey pixels, pure primaries and ties of two channels (the branches of
// rgb_to_hsv), float64.
at::Tensor hsv_test_images() {
  at::manual_seed(3);
  at::Tensor x = at::rand({4, 3, 4, 5}, at::kDouble) * 255.0;
  x.select(0, 0).select(2, 0).fill_(80.0);                                                   // grey column
  x.select(0, 1).select(1, 0).select(0, 1).fill_(0.0);                                       // no green in a row
  x.select(0, 1).select(1, 1).select(0, 0).copy_(x.select(0, 1).select(1, 1).select(0, 2));  // R = B ties
  x.select(0, 2).select(1, 2).fill_(0.0);
  x.select(0, 2).select(1, 2).select(0, 0).fill_(255.0);  // pure red
  return x;
}

}  // namespace

TEST(RandomHue, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomHue(RandomHueOptions(0.5).value_range({-3.0, 3.0})).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomHueOptions(0.2).value_range(), (std::vector<double>{0.0, 255.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const at::Tensor x = hsv_test_images();
  const std::vector<double> deltas = {0.0, 0.45, -0.3, -0.5};  // wraps both ways
  RandomHue layer(RandomHueOptions(1.0));
  const at::Tensor want = torchfit::testing::keras_reference(
      {{"op", "augment_hue"}, {"x", tensor_json(x)}, {"deltas", deltas}, {"value_range", {0.0, 255.0}}});
  torchfit::testing::expect_matches_reference(layer->adjust(x, at::tensor(deltas, at::kDouble)), want, 1e-9);
  const at::Tensor small = x / 255.0 * 2.0 - 1.0;  // value_range [-1, 1]: scaled to [0, 1] and back
  RandomHue signed_range(RandomHueOptions(1.0).value_range({-1.0, 1.0}));
  const at::Tensor want_signed = torchfit::testing::keras_reference(
      {{"op", "augment_hue"}, {"x", tensor_json(small)}, {"deltas", deltas}, {"value_range", {-1.0, 1.0}}});
  torchfit::testing::expect_matches_reference(signed_range->adjust(small, at::tensor(deltas, at::kDouble)), want_signed,
                                              1e-9);
  // float32 as in training, against the same float64 reference.
  torchfit::testing::expect_matches_reference(layer->adjust(x.to(at::kFloat), at::tensor(deltas, at::kFloat)), want,
                                              1e-3);
}

TEST(RandomHue, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  // factor 0.6 → u ~ U[0, 0.6), δ = ±u/2: |δ| covers [0, 0.3), both signs equally often.
  const at::Tensor d = RandomHue(RandomHueOptions(0.6))->draw_deltas(20000, like);
  torchfit::testing::expect_covers_range(d.abs(), 0.0, 0.3);
  EXPECT_NEAR((d > 0).to(at::kDouble).mean().item<double>(), 0.5, 0.015);
  const at::Tensor p = RandomHue(RandomHueOptions({0.8, 0.4}))->draw_deltas(20000, like);
  torchfit::testing::expect_covers_range(p.abs(), 0.2, 0.4);
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5}) * 255.0;
  torchfit::testing::expect_seeded_and_inference_identity([] { return RandomHue(RandomHueOptions(0.5)).ptr(); }, x);
  const auto layer = torchfit::testing::layer_from_keras3<RandomHueImpl>(torchfit::testing::keras3_augmentation_layer(
      "RandomHue", "h", {{"factor", {0.0, 0.3}}, {"value_range", {0, 1}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.0, 0.3}));
  EXPECT_EQ(layer->options.value_range(), (std::vector<double>{0.0, 1.0}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomHue(RandomHueOptions(1.5).name("h")); },
                      "layer 'h' (RandomHue): factor must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got 1.5");
  expect_config_error([] { RandomHue(RandomHueOptions(-0.1).name("h")); }, "got -0.1");
  expect_config_error(
      [] {
        RandomHue(RandomHueOptions(0.1).value_range({255.0, 0.0}).name("h"));
      },
      "layer 'h' (RandomHue): value_range must be [low, high] with low < high, got [255, 0]");
  expect_config_error([] { RandomHue(RandomHueOptions(0.1).value_range({0.0}).name("h")); },
                      "layer 'h' (RandomHue): value_range must be two numbers [low, high], got [0]");
  expect_config_error(
      [] {
        Sequential s;
        s->add(RandomHue(RandomHueOptions(0.1).name("h").input_shape(Shape{5, 7, 1})).ptr());
      },
      "layer 'h' (RandomHue) expects 3 channels (RGB), got");
}

TEST(RandomSaturation, ConformanceDefaultsAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandomSaturation(RandomSaturationOptions({0.1, 0.3})).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomSaturationOptions(0.2).value_range(), (std::vector<double>{0.0, 255.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const at::Tensor x = hsv_test_images();
  // Multipliers m = u/(1 − u + 1e-7): grey (u < 0), less, the same, 4 times (S past 1 with [0, 255]: RGB < 0).
  const std::vector<double> factors = {-0.25, 0.4, 1.0, 4.0};
  RandomSaturation layer(RandomSaturationOptions(0.5));
  const at::Tensor want = torchfit::testing::keras_reference(
      {{"op", "augment_saturation"}, {"x", tensor_json(x)}, {"factors", factors}, {"value_range", {0.0, 255.0}}});
  const at::Tensor y = layer->adjust(x, at::tensor(factors, at::kDouble));
  torchfit::testing::expect_matches_reference(y, want, 1e-9);
  EXPECT_LT(y.min().item<double>(), 0.0) << "S > 1 leaves [0, 255], as Keras";
  RandomSaturation unit(RandomSaturationOptions(0.5).value_range({1.0, 0.0}));  // sorted, as Keras
  const at::Tensor small = x / 255.0;
  const at::Tensor want_unit = torchfit::testing::keras_reference(
      {{"op", "augment_saturation"}, {"x", tensor_json(small)}, {"factors", factors}, {"value_range", {1.0, 0.0}}});
  torchfit::testing::expect_matches_reference(unit->adjust(small, at::tensor(factors, at::kDouble)), want_unit, 1e-9);
}

TEST(RandomSaturation, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1}, at::kDouble);
  const auto multiplier = [](double u) { return u / (1.0 - u + 1e-7); };  // Keras's factor / (1 - factor + eps)
  // A number 0.5 draws u from [-0.5, 0.5) (the base _FACTOR_BOUNDS (-1, 1)), a pair [0.2, 0.6] from itself.
  torchfit::testing::expect_covers_range(RandomSaturation(RandomSaturationOptions(0.5))->draw_factors(20000, like),
                                         multiplier(-0.5), multiplier(0.5));
  torchfit::testing::expect_covers_range(
      RandomSaturation(RandomSaturationOptions({0.6, 0.2}))->draw_factors(20000, like), multiplier(0.2),
      multiplier(0.6));
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 3, 6, 5}) * 255.0;
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomSaturation(RandomSaturationOptions(0.5)).ptr(); }, x);
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomSaturationImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomSaturation", "s", {{"factor", {0.5, 0.5}}, {"value_range", {0, 255}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.5, 0.5}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomSaturation(RandomSaturationOptions(-1.5).name("s")); },
                      "layer 's' (RandomSaturation): factor must be a number in [-1, 1] or a pair [lower, upper] "
                      "with lower <= 1 and upper >= -1, got -1.5");
  expect_config_error([] { RandomSaturation(RandomSaturationOptions({1.2, 1.5}).name("s")); }, "got [1.2, 1.5]");
  expect_config_error(
      [] {
        RandomSaturation(RandomSaturationOptions(0.1).value_range({0.0, 1.0, 2.0}).name("s"));
      },
      "layer 's' (RandomSaturation): value_range must be two numbers [low, high], got [0, 1, 2]");
}

TEST(RandomColorJitter, StepsInKerasOrderSeededConfigAndErrors) {
  const auto opts = RandomColorJitterOptions()
                        .value_range({0.0, 1.0})
                        .brightness_factor(KerasFactor(0.2))
                        .contrast_factor(KerasFactor(0.3))
                        .saturation_factor(KerasFactor(0.1, 0.9))
                        .hue_factor(KerasFactor(0.5));
  torchfit::testing::expect_layer_conformance(
      RandomColorJitter(opts).ptr(),
      torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(RandomColorJitterOptions().value_range(), (std::vector<double>{0.0, 255.0}));
  EXPECT_FALSE(RandomColorJitterOptions().brightness_factor().has_value());
  // Keras's order from the same generator state: brightness, contrast, saturation, hue, each drawing after the
  // step before.
  at::manual_seed(4);
  const at::Tensor x = at::rand({5, 3, 6, 7});
  RandomColorJitter jitter(opts);
  const auto& b = jitter->brightness();
  const auto& c = jitter->contrast();
  const auto& s = jitter->saturation();
  const auto& h = jitter->hue();
  ASSERT_TRUE(b && c && s && h);
  EXPECT_EQ(b->options.value_range(), (std::vector<double>{0.0, 1.0}));
  jitter->train();
  at::manual_seed(21);
  const at::Tensor got = jitter->forward(x);
  at::manual_seed(21);
  at::Tensor want = b->adjust(x, b->draw_deltas(5, x));
  want = c->adjust(want, c->draw_factors(5, want));
  want = s->adjust(want, s->draw_factors(5, want));
  want = h->adjust(want, h->draw_deltas(5, want));
  EXPECT_TRUE(at::equal(got, want));
  // Only the steps given: hue alone is RandomHue.
  RandomColorJitter hue_only(RandomColorJitterOptions().hue_factor(KerasFactor(0.4)));
  EXPECT_FALSE(hue_only->brightness() || hue_only->contrast() || hue_only->saturation());
  hue_only->train();
  at::manual_seed(22);
  const at::Tensor alone = hue_only->forward(x * 255.0);
  at::manual_seed(22);
  RandomHue plain(RandomHueOptions(0.4));
  EXPECT_TRUE(at::equal(alone, plain->adjust(x * 255.0, plain->draw_deltas(5, x))));
  torchfit::testing::expect_seeded_and_inference_identity([opts] { return RandomColorJitter(opts).ptr(); }, x);
  const auto layer = torchfit::testing::layer_from_keras3<RandomColorJitterImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomColorJitter", "j",
                                                   {{"value_range", {0, 255}},
                                                    {"brightness_factor", nullptr},
                                                    {"contrast_factor", 0.5},
                                                    {"saturation_factor", {0.4, 0.6}},
                                                    {"hue_factor", nullptr}}));
  ASSERT_TRUE(layer);
  EXPECT_FALSE(layer->brightness() || layer->hue());
  ASSERT_TRUE(layer->contrast() && layer->saturation());
  EXPECT_EQ(layer->options.saturation_factor()->values, (std::vector<double>{0.4, 0.6}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { RandomColorJitter(RandomColorJitterOptions().hue_factor(KerasFactor(2.0)).name("j")); },
                      "layer 'j' (RandomColorJitter): layer 'hue_factor' (RandomHue): factor must be a number in "
                      "[0, 1]");
  expect_config_error(
      [] { RandomColorJitter(RandomColorJitterOptions().brightness_factor(KerasFactor(-3.0)).name("j")); },
      "layer 'j' (RandomColorJitter): layer 'brightness_factor' (RandomBrightness): factor must be a number in "
      "[-1, 1]");
  expect_config_error(
      [] {
        RandomColorJitter(RandomColorJitterOptions().value_range({1.0, 0.0}).name("j"));
      },
      "layer 'j' (RandomColorJitter): value_range must be [low, high] with low < high, got [1, 0]");
  expect_config_error(
      [] {
        Sequential seq;
        seq->add(
            RandomColorJitter(
                RandomColorJitterOptions().saturation_factor(KerasFactor(0.5)).name("j").input_shape(Shape{5, 7, 1}))
                .ptr());
      },
      "layer 'j' (RandomColorJitter) expects 3 channels (RGB), got");
  Sequential gray;  // brightness and contrast alone take any channels, as Keras's
  gray->add(RandomColorJitter(RandomColorJitterOptions().contrast_factor(KerasFactor(0.5)).input_shape(Shape{5, 7, 1}))
                .ptr());
}
