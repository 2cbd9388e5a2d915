// RandAugment (Keras 3): the picked operations applied in turn at given draws against the NumPy reference
// written from Keras 3's RandAugment.transform_images and its operations (keras_image_augmentation_reference.py);
// the training forward draws as Keras's get_random_transformation (num_ops indices per batch, then every
// operation's draws in _AUGMENT_LAYERS order, each operation built as Keras's __init__ builds it); draws in range;
// seeded; the input in inference; conformance; Keras 3 config; errors naming the layer and value.
#include <gtest/gtest.h>

#include <set>

#include <torchfit/layers/rand_augment.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::expect_config_error;
using torchfit::testing::tensor_json;

namespace {

at::Tensor doubles(const std::vector<double>& v) { return at::tensor(v, at::kDouble); }

}  // namespace

TEST(RandAugment, ConformanceAndOperationsAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      RandAugment(RandAugmentOptions().num_ops(3).factor(0.8)).ptr(),
      torchfit::testing::LayerConformance({6, 7, 3}, {6, 7, 3}).training_changes_output(true).seed(3));
  EXPECT_EQ(RandAugmentImpl::operation_names().size(), 11u);
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = (at::rand({2, 3, 6, 7}, at::kDouble) * 256.0).floor().clamp_max(255.0);
  const std::vector<double> sx = {0.1, -0.2}, sy = {0.05, 0.15}, fy = {0.1, -0.2}, fx = {0.0, 0.3}, ang = {12.0, -40.0};
  const std::vector<double> deltas = {20.0, -35.0}, degen = {0.3, 0.1}, contrast = {0.8, 1.3}, sharp = {0.2, 0.9};
  const std::vector<int64_t> bits = {3, 2};
  const std::vector<double> additions = {10.0, 60.0}, thresholds = {120.0, 200.0};
  // Every operation, some twice (the same draws again), in an order that also exercises the colour ones after
  // the geometric resampling.
  const std::vector<int64_t> ops = {6, 0, 4, 9, 1, 7, 2, 8, 10, 3, 5, 6};
  for (const std::string interp : {"bilinear", "nearest"}) {
    SCOPED_TRACE(interp);
    RandAugment layer(RandAugmentOptions().interpolation(interp));
    const std::vector<at::Tensor> drawn = {
        RandomShearImpl::shear_transforms(doubles(sx), doubles(sy)),
        RandomTranslationImpl::translation_transforms(doubles(fy), doubles(fx), 6, 7),
        RandomRotationImpl::rotation_transforms(doubles(ang), 6, 7),
        doubles(deltas),
        doubles(degen),
        doubles(contrast),
        doubles(sharp),
        at::tensor(bits),
        at::stack({doubles(additions), doubles(thresholds)}, 1),
        at::Tensor(),
        at::Tensor()};
    at::Tensor y = x;
    for (int64_t op : ops) y = layer->apply_operation(op, y, drawn[static_cast<size_t>(op)]);
    const at::Tensor want = torchfit::testing::keras_reference({{"op", "augment_rand_augment"},
                                                                {"x", tensor_json(x)},
                                                                {"ops", ops},
                                                                {"shear_x", sx},
                                                                {"shear_y", sy},
                                                                {"height_translate", fy},
                                                                {"width_translate", fx},
                                                                {"angles", ang},
                                                                {"deltas", deltas},
                                                                {"degeneration", degen},
                                                                {"contrast", contrast},
                                                                {"sharpness", sharp},
                                                                {"bits", bits},
                                                                {"additions", additions},
                                                                {"thresholds", thresholds},
                                                                {"value_range", {0.0, 255.0}},
                                                                {"interpolation", interp}});
    torchfit::testing::expect_matches_reference(y, want, 1e-6);
  }
}

// The training forward draws exactly as Keras: randint(0, 11) num_ops times per batch, then each operation's
// draws in _AUGMENT_LAYERS order from operations built with Keras's arguments (factor [lower, upper] of
// RandAugment's factor, RandomPosterization max(1, int(8·upper)), the given value_range and interpolation).
TEST(RandAugment, TrainingForwardDrawsAndAppliesAsKeras3) {
  at::manual_seed(123);  // the same images whatever ran before
  const at::Tensor x = (at::rand({3, 3, 6, 7}) * 255.0).floor();
  const std::vector<double> vr = {0.0, 255.0};
  const KerasFactor f(0.0, 0.7);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE(seed);
    RandAugment layer(RandAugmentOptions().num_ops(3).factor(0.7).interpolation("nearest"));
    const at::Tensor got = torchfit::testing::seeded_train_forward(layer.ptr(), x, seed);
    at::manual_seed(seed);
    const at::Tensor ops = at::randint(0, 11, {3}, at::kLong);
    RandomShear shear(RandomShearOptions().x_factor(f).y_factor(f).interpolation("nearest"));
    RandomTranslation translation(RandomTranslationOptions(f, f).interpolation("nearest"));
    RandomRotation rotation(RandomRotationOptions(f).interpolation("nearest"));
    RandomBrightness brightness(RandomBrightnessOptions(f).value_range(vr));
    RandomColorDegeneration degeneration(RandomColorDegenerationOptions(f).value_range(vr));
    RandomContrast contrast(RandomContrastOptions(f).value_range(vr));
    RandomSharpness sharpness(RandomSharpnessOptions(f).value_range(vr));
    RandomPosterization posterization(RandomPosterizationOptions(5).value_range(vr));  // int(8 · 0.7)
    Solarization solarization(SolarizationOptions().addition_factor(f).threshold_factor(f).value_range(vr));
    const at::Tensor t_shear = shear->draw_transforms(x), t_translation = translation->draw_transforms(x),
                     t_rotation = rotation->draw_transforms(x), d_brightness = brightness->draw_deltas(3, x),
                     d_degeneration = degeneration->draw_factors(3, x), d_contrast = contrast->draw_factors(3, x),
                     d_sharpness = sharpness->draw_factors(3, x), d_bits = posterization->draw_bits(3, x),
                     d_solarization = solarization->draw_parameters(3, x);
    at::Tensor want = x;
    for (int64_t i = 0; i < 3; ++i) {
      switch (ops[i].item<int64_t>()) {
        case 0:
          want = shear->transform_images(want, t_shear);
          break;
        case 1:
          want = translation->transform_images(want, t_translation);
          break;
        case 2:
          want = rotation->transform_images(want, t_rotation);
          break;
        case 3:
          want = brightness->adjust(want, d_brightness);
          break;
        case 4:
          want = degeneration->degenerate(want, d_degeneration);
          break;
        case 5:
          want = contrast->adjust(want, d_contrast);
          break;
        case 6:
          want = sharpness->sharpen(want, d_sharpness);
          break;
        case 7:
          want = posterization->posterize(want, d_bits);
          break;
        case 8:
          want = solarization->solarize(want, d_solarization);
          break;
        case 9:
          want = AutoContrast()->forward(want);
          break;
        default:
          want = Equalization()->equalize(want);
          break;
      }
    }
    // The same operations on the same draws; float rounding of the layer's own reductions (contrast's mean over
    // another memory layout, several threads) may differ by an ulp, so equal within 1e-3 on the 0-255 scale.
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-3) << "ops " << ops;
  }
}

TEST(RandAugment, DrawsInKerasRangeSeededIdentityInInferenceConfigAndErrors) {
  at::manual_seed(7);
  RandAugment layer(RandAugmentOptions().factor(0.5));
  std::set<int64_t> seen;
  for (int i = 0; i < 200; ++i) {
    const at::Tensor ops = layer->draw_operations();
    ASSERT_EQ(ops.numel(), 2);
    for (int64_t k = 0; k < 2; ++k) seen.insert(ops[k].item<int64_t>());
  }
  EXPECT_EQ(seen.size(), 11u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 10);
  const at::Tensor big = at::zeros({20000, 3, 2, 2});
  const at::Tensor bits = layer->draw_operation(7, big);  // factor 0.5: int(8 · 0.5) = 4 → randint(1, 4)
  EXPECT_EQ(bits.min().item<int64_t>(), 1);
  EXPECT_EQ(bits.max().item<int64_t>(), 3);
  const at::Tensor solar = layer->draw_operation(8, big);
  torchfit::testing::expect_covers_range(solar.select(1, 0), 0.0, 0.5 * 255.0);
  torchfit::testing::expect_covers_range(layer->draw_operation(4, big), 0.0, 0.5);    // [0, f]: bounds (0, 1)
  torchfit::testing::expect_covers_range(layer->draw_operation(3, big), 0.0, 127.5);  // brightness [0, 0.5]·255
  EXPECT_FALSE(layer->draw_operation(9, big).defined());
  at::manual_seed(8);
  const at::Tensor x = (at::rand({4, 3, 6, 5}) * 255.0).floor();
  torchfit::testing::expect_seeded_and_inference_identity(
      [] { return RandAugment(RandAugmentOptions().num_ops(3).factor(0.9)).ptr(); }, x);
  const auto built = torchfit::testing::layer_from_keras3<RandAugmentImpl>(torchfit::testing::keras3_augmentation_layer(
      "RandAugment", "r",
      {{"value_range", {0, 1}}, {"num_ops", 3}, {"factor", {0.0, 0.3}}, {"interpolation", "nearest"}}));
  ASSERT_TRUE(built);
  EXPECT_EQ(built->options.num_ops(), 3);
  EXPECT_EQ(built->options.factor().values, (std::vector<double>{0.0, 0.3}));
  EXPECT_EQ(built->options.interpolation(), "nearest");
  EXPECT_EQ(RandAugmentOptions().num_ops(), 2);
  EXPECT_EQ(RandAugmentOptions().factor().values, (std::vector<double>{0.5}));
  expect_config_error([] { RandAugment(RandAugmentOptions().factor(1.5).name("r")); },
                      "layer 'r' (RandAugment): factor must be a number in [0, 1] or a pair [lower, upper] with "
                      "lower <= 1 and upper >= 0, got 1.5");
  expect_config_error([] { RandAugment(RandAugmentOptions().num_ops(-1).name("r")); },
                      "layer 'r' (RandAugment): num_ops must be in [0, 100], got -1");
  expect_config_error([] { RandAugment(RandAugmentOptions().interpolation("cubic").name("r")); },
                      "layer 'r' (RandAugment): interpolation must be 'nearest' or 'bilinear', got 'cubic'");
  expect_config_error([] { RandAugment(RandAugmentOptions().value_range({1.0}).name("r")); },
                      "layer 'r' (RandAugment): value_range must be two numbers [low, high], got [1]");
  expect_config_error(
      [] {
        Sequential s;
        auto r = RandAugment(RandAugmentOptions().name("r"));
        r->set_declared_input_shape(Shape{5, 7, 4});
        s->add(r.ptr());
      },
      "layer 'r' (RandAugment) expects 1 or 3 channels (RGB or grayscale), got");
}
