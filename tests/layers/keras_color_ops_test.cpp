// RandomColorDegeneration, RandomSharpness, RandomPosterization, Solarization, AutoContrast and Equalization
// (Keras 3): at given draws against the float64 NumPy references written from Keras 3's transform_images
// (keras_image_augmentation_reference.py); draws in Keras's ranges (RandomColorDegeneration's number f ⇒
// [−f, f), RandomPosterization's randint excluding the upper bound, Solarization's lower bound not scaled by
// 255); seeded; the input in inference (AutoContrast active in both, as Keras); conformance; Keras 3 configs;
// errors naming the layer and value.
#include <gtest/gtest.h>

#include <limits>

#include <torchfit/layers/auto_contrast.h>
#include <torchfit/layers/equalization.h>
#include <torchfit/layers/random_color_degeneration.h>
#include <torchfit/layers/random_posterization.h>
#include <torchfit/layers/random_sharpness.h>
#include <torchfit/layers/solarization.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::expect_config_error;
using torchfit::testing::tensor_json;

namespace {

torchfit::testing::LayerConformance image_conformance(bool changes) {
  return torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(changes);
}

// Integer pixel values in [0, 255] or a uniform in [0, 1), (N, C, H, W) float64.
at::Tensor images(int64_t n, int64_t c, bool integers, uint64_t seed) {
  at::manual_seed(seed);
  const at::Tensor x = at::rand({n, c, 6, 7}, at::kDouble);
  return integers ? (x * 256.0).floor().clamp_max(255.0) : x;
}

}  // namespace

TEST(RandomColorDegeneration, ConformanceAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(RandomColorDegeneration(RandomColorDegenerationOptions(0.5)).ptr(),
                                              image_conformance(true));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<double> factors = {-0.7, 0.0, 0.4, 1.0};  // −0.7 pushes colours past [0, 1]: clipped
  for (int64_t c : {3, 1}) {
    SCOPED_TRACE(c);
    const at::Tensor x = images(4, c, false, 1);
    RandomColorDegeneration layer(RandomColorDegenerationOptions(1.0).value_range({1.0, 0.0}));
    const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_color_degeneration"},
                                                                {"x", tensor_json(x)},
                                                                {"factors", factors},
                                                                {"value_range", {1.0, 0.0}}});
    torchfit::testing::expect_matches_reference(layer->degenerate(x, at::tensor(factors, at::kDouble)), want, 1e-12);
  }
}

TEST(RandomColorDegeneration, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  // Keras 3's code: a number f keeps the base's bounds (−1, 1): [−f, f), not the docstring's [0, f].
  torchfit::testing::expect_covers_range(
      RandomColorDegeneration(RandomColorDegenerationOptions(0.4))->draw_factors(20000, like), -0.4, 0.4);
  torchfit::testing::expect_covers_range(
      RandomColorDegeneration(RandomColorDegenerationOptions({0.6, 0.1}))->draw_factors(20000, like), 0.1, 0.6);
  const at::Tensor x = images(4, 3, true, 8);
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomColorDegeneration(RandomColorDegenerationOptions(0.5)).ptr(); }, x);
  const auto layer =
      torchfit::testing::layer_from_keras3<RandomColorDegenerationImpl>(torchfit::testing::keras3_augmentation_layer(
          "RandomColorDegeneration", "d", {{"factor", {0.0, 0.3}}, {"value_range", {0, 1}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.0, 0.3}));
  EXPECT_EQ(layer->options.value_range(), (std::vector<double>{0.0, 1.0}));
  expect_config_error([] { RandomColorDegeneration(RandomColorDegenerationOptions(1.5).name("d")); },
                      "layer 'd' (RandomColorDegeneration): factor must be a number in [-1, 1] or a pair [lower, "
                      "upper] with lower <= 1 and upper >= -1, got 1.5");
  expect_config_error([] { RandomColorDegeneration(RandomColorDegenerationOptions(0.1).value_range({0.0}).name("d")); },
                      "layer 'd' (RandomColorDegeneration): value_range must be two numbers [low, high], got [0]");
  expect_config_error(
      [] {
        Sequential s;
        auto d = RandomColorDegeneration(RandomColorDegenerationOptions(0.1).name("d"));
        d->set_declared_input_shape(Shape{5, 7, 2});
        s->add(d.ptr());
      },
      "layer 'd' (RandomColorDegeneration) expects 1 or 3 channels (RGB or grayscale), got");
}

TEST(RandomSharpness, ConformanceAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(RandomSharpness(RandomSharpnessOptions(0.9)).ptr(),
                                              image_conformance(true));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<double> factors = {0.0, 0.5, 0.8, 1.0};  // blurred, unchanged, sharper (clipped at 255)
  const at::Tensor x = images(4, 3, true, 2);
  RandomSharpness layer(RandomSharpnessOptions(1.0));
  const at::Tensor want = torchfit::testing::keras_reference(
      {{"op", "augment_sharpness"}, {"x", tensor_json(x)}, {"factors", factors}, {"value_range", {0.0, 255.0}}});
  const at::Tensor got = layer->sharpen(x, at::tensor(factors, at::kDouble));
  torchfit::testing::expect_matches_reference(got, want, 1e-9);
  EXPECT_TRUE(at::allclose(got[1], x[1])) << "factor 0.5 leaves the image";
  EXPECT_FALSE(at::allclose(got[0].select(1, 0), x[0].select(1, 0))) << "the border row is blurred with zeros";
}

TEST(RandomSharpness, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  torchfit::testing::expect_covers_range(RandomSharpness(RandomSharpnessOptions(0.3))->draw_factors(20000, like), 0.0,
                                         0.3);
  torchfit::testing::expect_covers_range(RandomSharpness(RandomSharpnessOptions({0.9, 0.2}))->draw_factors(20000, like),
                                         0.2, 0.9);
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomSharpness(RandomSharpnessOptions(1.0)).ptr(); }, images(4, 3, true, 8));
  const auto layer = torchfit::testing::layer_from_keras3<RandomSharpnessImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomSharpness", "s", {{"factor", {0.2, 0.7}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{0.2, 0.7}));
  expect_config_error([] { RandomSharpness(RandomSharpnessOptions(-0.2).name("s")); },
                      "layer 's' (RandomSharpness): factor must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got -0.2");
  expect_config_error([] { RandomSharpness(RandomSharpnessOptions({1.5, 2.0}).name("s")); }, "got [1.5, 2]");
}

TEST(RandomPosterization, ValuesAsKeras3) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<int64_t> bits = {1, 3, 7, 8};
  for (bool unit : {false, true}) {
    SCOPED_TRACE(unit);
    const at::Tensor x = unit ? images(4, 3, false, 3) : images(4, 3, true, 3);
    const std::vector<double> range = unit ? std::vector<double>{0.0, 1.0} : std::vector<double>{0.0, 255.0};
    RandomPosterization layer(RandomPosterizationOptions(8).value_range(range));
    const at::Tensor want = torchfit::testing::keras_reference(
        {{"op", "augment_posterization"}, {"x", tensor_json(x)}, {"bits", bits}, {"value_range", range}});
    torchfit::testing::expect_matches_reference(layer->posterize(x, at::tensor(bits)), want, 1e-12);
  }
}

TEST(RandomPosterization, DrawsInKerasRangeSeededConfigAndErrors) {
  // No conformance helper: the uint8 cast cuts the gradient (as Keras's), which its check 8 requires.
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  const at::Tensor drawn = RandomPosterization(RandomPosterizationOptions(8))->draw_bits(5000, like);
  EXPECT_EQ(drawn.min().item<int64_t>(), 1);
  EXPECT_EQ(drawn.max().item<int64_t>(), 7) << "randint(1, 8) excludes 8";
  const at::Tensor pair = RandomPosterization(RandomPosterizationOptions({6, 3}))->draw_bits(5000, like);
  EXPECT_EQ(pair.min().item<int64_t>(), 3);
  EXPECT_EQ(pair.max().item<int64_t>(), 5);
  EXPECT_TRUE((RandomPosterization(RandomPosterizationOptions({4, 4}))->draw_bits(50, like) == 4).all().item<bool>());
  EXPECT_TRUE((RandomPosterization(RandomPosterizationOptions(1))->draw_bits(50, like) == 1).all().item<bool>());
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandomPosterization(RandomPosterizationOptions(4)).ptr(); }, images(8, 3, true, 8));
  const auto layer = torchfit::testing::layer_from_keras3<RandomPosterizationImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomPosterization", "p", {{"factor", {1, 4}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.factor().values, (std::vector<double>{1.0, 4.0}));
  expect_config_error([] { RandomPosterization(RandomPosterizationOptions(9).name("p")); },
                      "layer 'p' (RandomPosterization): factor must be a number in [1, 8] or a pair");
  expect_config_error([] { RandomPosterization(RandomPosterizationOptions(2.5).name("p")); },
                      "layer 'p' (RandomPosterization): factor must hold integers whose draws keep 0 to 8 bits "
                      "(randint(lower, upper) with 0 <= lower and upper <= 9, or lower = upper <= 8), got 2.5");
  expect_config_error([] { RandomPosterization(RandomPosterizationOptions({-1, 4}).name("p")); }, "got [-1, 4]");
}

TEST(Solarization, ConformanceAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(Solarization().ptr(), image_conformance(true));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<double> additions = {0.0, 40.5, 100.0, 0.0}, thresholds = {0.0, 128.0, 200.0, 255.0};
  for (bool unit : {false, true}) {
    SCOPED_TRACE(unit);
    const at::Tensor x = unit ? images(4, 3, false, 4) : images(4, 3, true, 4);
    const std::vector<double> range = unit ? std::vector<double>{1.0, 0.0} : std::vector<double>{0.0, 255.0};
    Solarization layer(SolarizationOptions().value_range(range));
    const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_solarization"},
                                                                {"x", tensor_json(x)},
                                                                {"additions", additions},
                                                                {"thresholds", thresholds},
                                                                {"value_range", range}});
    const at::Tensor p = at::stack({at::tensor(additions, at::kDouble), at::tensor(thresholds, at::kDouble)}, 1);
    torchfit::testing::expect_matches_reference(layer->solarize(x, p), want, 1e-12);
  }
}

TEST(Solarization, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1});
  // Keras 3: uniform(minval=factor[0], maxval=factor[1]·255) — the lower bound is not scaled.
  const at::Tensor p = Solarization(SolarizationOptions().addition_factor({0.2, 0.4}).threshold_factor(0.5))
                           ->draw_parameters(20000, like);
  torchfit::testing::expect_covers_range(p.select(1, 0), 0.2, 0.4 * 255.0);
  torchfit::testing::expect_covers_range(p.select(1, 1), 0.0, 0.5 * 255.0);
  EXPECT_TRUE((Solarization()->draw_parameters(10, like) == 0).all().item<bool>()) << "the defaults draw 0";
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return Solarization(SolarizationOptions().addition_factor(0.3).threshold_factor(0.8)).ptr(); },
      images(4, 3, true, 8));
  const auto layer =
      torchfit::testing::layer_from_keras3<SolarizationImpl>(torchfit::testing::keras3_augmentation_layer(
          "Solarization", "s", {{"addition_factor", {0.0, 0.2}}, {"threshold_factor", 0.6}, {"value_range", {0, 1}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.addition_factor().values, (std::vector<double>{0.0, 0.2}));
  EXPECT_EQ(layer->options.threshold_factor().values, (std::vector<double>{0.6}));
  expect_config_error([] { Solarization(SolarizationOptions().addition_factor(1.2).name("s")); },
                      "layer 's' (Solarization): addition_factor must be a number or a pair of numbers in [0, 1], "
                      "got 1.2");
  expect_config_error(
      [] {
        Solarization(SolarizationOptions().threshold_factor({-0.1, 0.5}).name("s"));
      },
      "layer 's' (Solarization): threshold_factor must be a number or a pair of numbers in [0, 1], "
      "got [-0.1, 0.5]");
}

TEST(AutoContrast, ConformanceAndValuesAsKeras3InTrainingAndInference) {
  torchfit::testing::expect_layer_conformance(AutoContrast().ptr(), image_conformance(false));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (bool unit : {false, true}) {
    SCOPED_TRACE(unit);
    at::Tensor x = unit ? images(3, 3, false, 5) * 0.5 + 0.2 : images(3, 3, true, 5) * 0.4 + 30.0;
    x[1][2].fill_(unit ? 0.3 : 77.0);  // a constant channel: 255/0, NaN, the input kept
    const std::vector<double> range = unit ? std::vector<double>{1.0, 0.0} : std::vector<double>{0.0, 255.0};
    AutoContrast layer(AutoContrastOptions().value_range(range));
    const at::Tensor want = torchfit::testing::keras_reference(
        {{"op", "augment_auto_contrast"}, {"x", tensor_json(x)}, {"value_range", range}});
    for (bool training : {true, false}) {
      training ? layer->train() : layer->eval();
      torchfit::testing::expect_matches_reference(layer->forward(x), want, 1e-9);
    }
    EXPECT_TRUE(at::equal(layer->forward(x)[1][2], x[1][2]));
  }
}

TEST(AutoContrast, ConfigAndErrors) {
  const auto layer = torchfit::testing::layer_from_keras3<AutoContrastImpl>(
      torchfit::testing::keras3_augmentation_layer("AutoContrast", "a", {{"value_range", {0, 1}}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.value_range(), (std::vector<double>{0.0, 1.0}));
  expect_config_error(
      [] {
        AutoContrast(AutoContrastOptions().value_range({0.0, 1.0, 2.0}).name("a"));
      },
      "layer 'a' (AutoContrast): value_range must be two numbers [low, high], got [0, 1, 2]");
  expect_config_error(
      [] {
        Sequential s;
        auto a = AutoContrast(AutoContrastOptions().name("a"));
        a->set_declared_input_shape(Shape{5, 7});
        s->add(a.ptr());
      },
      "layer 'a' (AutoContrast) expects a 3-D input (H, W, C), got");
}

TEST(Equalization, ConformanceAndValuesAsKeras3) {
  torchfit::testing::expect_layer_conformance(Equalization().ptr(), image_conformance(true));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    bool unit;
    int64_t bins;
  };
  for (const Case& c : {Case{false, 256}, Case{false, 17}, Case{true, 256}, Case{true, 64}}) {
    SCOPED_TRACE(std::to_string(c.unit) + " bins " + std::to_string(c.bins));
    // Skewed values (x²): a histogram worth equalizing; channel 1 constant: one bin, the channel unchanged.
    at::Tensor x = images(3, 3, false, 6).pow(2);
    if (!c.unit) x = (x * 200.0).floor();
    x.select(1, 1).fill_(c.unit ? 0.25 : 90.0);
    const std::vector<double> range = c.unit ? std::vector<double>{0.0, 1.0} : std::vector<double>{255.0, 0.0};
    Equalization layer(EqualizationOptions().value_range(range).bins(c.bins));
    const at::Tensor want = torchfit::testing::keras_reference(
        {{"op", "augment_equalization"}, {"x", tensor_json(x)}, {"value_range", range}, {"bins", c.bins}});
    const at::Tensor got = layer->equalize(x);
    torchfit::testing::expect_matches_reference(got, want, 1e-9);
    EXPECT_FALSE(at::allclose(got.select(1, 0), x.select(1, 0)));
    // The histogram is the whole batch's: one image alone equalizes otherwise.
    EXPECT_FALSE(at::allclose(layer->equalize(x.narrow(0, 0, 1)), got.narrow(0, 0, 1)));
  }
}

TEST(Equalization, SeededIdentityInInferenceConfigAndErrors) {
  const at::Tensor x = images(4, 3, true, 8);
  Equalization layer;
  layer->train();
  EXPECT_FALSE(at::equal(layer->forward(x), x));
  layer->eval();
  EXPECT_TRUE(at::equal(layer->forward(x), x)) << "Keras 3's code equalizes in training only";
  const auto built = torchfit::testing::layer_from_keras3<EqualizationImpl>(
      torchfit::testing::keras3_augmentation_layer("Equalization", "e", {{"value_range", {0, 1}}, {"bins", 128}}));
  ASSERT_TRUE(built);
  EXPECT_EQ(built->options.bins(), 128);
  EXPECT_EQ(EqualizationOptions().bins(), 256);
  expect_config_error([] { Equalization(EqualizationOptions().bins(0).name("e")); },
                      "layer 'e' (Equalization): bins must be in [1, 65536], got 0");
  expect_config_error([] { Equalization(EqualizationOptions().value_range({}).name("e")); },
                      "layer 'e' (Equalization): value_range must be two numbers [low, high], got []");
}
