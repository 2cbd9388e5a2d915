// MixUp and CutMix (Keras 3): images and labels at given draws against the NumPy reference written from Keras 3's
// transform_images / transform_labels (keras_image_augmentation_reference.py); the Beta draws (Gamma draws from
// the CPU generator) against Beta's mean and variance, small alphas finite; permutations; CutMix's batch alpha in
// [lower, upper) + 1e-6; mix() the same draws as the layer's forward; seeded; the input in inference;
// conformance; Keras 3 configs; errors naming the layer and value.
#include <gtest/gtest.h>

#include <torchfit/layers/cut_mix.h>
#include <torchfit/layers/mix_up.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

void expect_beta_moments(const at::Tensor& t, double a, double b) {
  const double mean = a / (a + b), var = a * b / ((a + b) * (a + b) * (a + b + 1.0));
  EXPECT_TRUE(at::isfinite(t).all().item<bool>());
  EXPECT_GE(t.min().item<double>(), 0.0);
  EXPECT_LE(t.max().item<double>(), 1.0);
  EXPECT_NEAR(t.mean().item<double>(), mean, 0.01) << "Beta(" << a << ", " << b << ")";
  EXPECT_NEAR(t.var().item<double>(), var, 0.06 * var + 0.002) << "Beta(" << a << ", " << b << ")";
}

std::vector<int64_t> mix_ints(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

nlohmann::json mix_pairs(const at::Tensor& t) {
  nlohmann::json j = nlohmann::json::array();
  for (int64_t i = 0; i < t.size(0); ++i) j.push_back({t[i][0].item<double>(), t[i][1].item<double>()});
  return j;
}

}  // namespace

TEST(MixUp, BetaAndPermutationDrawsAsKeras) {
  at::manual_seed(7);
  const at::Tensor like = at::zeros({1}, at::kDouble);
  expect_beta_moments(beta_draws(40000, 0.2, 0.2, like), 0.2, 0.2);
  expect_beta_moments(beta_draws(40000, 2.0, 5.0, like), 2.0, 5.0);
  expect_beta_moments(beta_draws(40000, 1.0, 1.0, like), 1.0, 1.0);
  // A tiny alpha (CutMix's factor lower 0 gives α = 1e-6): finite, almost all at 0 or 1, half each.
  const at::Tensor tiny = beta_draws(4000, 1e-6, 1e-6, like);
  EXPECT_TRUE(at::isfinite(tiny).all().item<bool>());
  EXPECT_NEAR((tiny > 0.5).to(at::kDouble).mean().item<double>(), 0.5, 0.04);
  EXPECT_LT(((tiny > 1e-3) & (tiny < 1 - 1e-3)).to(at::kDouble).mean().item<double>(), 0.01);
  EXPECT_EQ(beta_draws(3, 0.2, 0.2, at::zeros({1})).scalar_type(), at::kFloat);
  const at::Tensor p = permutation_draws(9, like);
  EXPECT_EQ(mix_ints(std::get<0>(p.sort())), mix_ints(at::arange(9)));
  const MixUpDraws d = MixUp(MixUpOptions().alpha(0.4))->draw(at::zeros({30000, 1, 1, 1}));
  expect_beta_moments(d.weights, 0.4, 0.4);
  EXPECT_EQ(mix_ints(std::get<0>(d.permutation.sort())), mix_ints(at::arange(30000)));
}

TEST(MixUp, ConformanceAndImagesAndLabelsAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      MixUp().ptr(), torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(MixUpOptions().alpha(), 0.2);
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({4, 2, 3, 5}, at::kDouble) * 255.0;
  const at::Tensor labels = at::one_hot(at::tensor({0, 2, 1, 2}, at::kLong), 3).to(at::kDouble);
  MixUpDraws d;
  d.permutation = at::tensor({2, 0, 3, 1}, at::kLong);
  d.weights = at::tensor({0.9, 0.02, 0.5, 1.0}, at::kDouble);
  const nlohmann::json req = {{"op", "augment_mixup"},
                              {"x", tensor_json(x)},
                              {"weights", {0.9, 0.02, 0.5, 1.0}},
                              {"permutation", {2, 0, 3, 1}}};
  MixUp layer;
  const auto [images, mixed] = layer->mix(x, labels, d);
  torchfit::testing::expect_matches_reference(images, torchfit::testing::keras_reference(req), 1e-9);
  torchfit::testing::expect_matches_reference(layer->mix_images(x, d), torchfit::testing::keras_reference(req), 1e-9);
  nlohmann::json label_req = req;
  label_req["labels"] = tensor_json(labels);
  torchfit::testing::expect_matches_reference(mixed, torchfit::testing::keras_reference(label_req), 1e-12);
}

TEST(MixUp, MixIsTheForwardsDrawSeededConfigAndErrors) {
  at::manual_seed(8);
  const at::Tensor x = at::rand({6, 3, 5, 4});
  const at::Tensor y = at::one_hot(at::arange(6) % 3, 3).to(at::kFloat);
  MixUp layer;
  layer->train();
  at::manual_seed(30);
  const at::Tensor forward = layer->forward(x);
  at::manual_seed(30);
  const auto [images, labels] = layer->mix(x, y);
  EXPECT_TRUE(at::equal(images, forward)) << "mix() draws as the layer's forward";
  EXPECT_TRUE(at::allclose(labels.sum(1), at::ones({6}))) << "mixed one-hot labels still sum to 1";
  EXPECT_FALSE(at::equal(labels, y));
  torchfit::testing::expect_seeded_and_inference_identity([] { return MixUp().ptr(); }, x);
  const auto built = torchfit::testing::layer_from_keras3<MixUpImpl>(
      torchfit::testing::keras3_augmentation_layer("MixUp", "m", {{"alpha", 0.3}}));
  ASSERT_TRUE(built);
  EXPECT_EQ(built->options.alpha(), 0.3);
  using torchfit::testing::expect_config_error;
  expect_config_error([] { MixUp(MixUpOptions().alpha(0.0).name("m")); },
                      "layer 'm' (MixUp): alpha must be a number > 0, got 0");
  expect_config_error([] { MixUp(MixUpOptions().alpha(-0.5).name("m")); }, "got -0.5");
  expect_config_error([&] { MixUp(MixUpOptions().name("m"))->mix(x, at::arange(6)); },
                      "layer 'm' (MixUp): labels must be (N, K) floating point (one-hot or soft labels) for the N = 6 "
                      "images, got Long [6]");
  expect_config_error([&] { MixUp(MixUpOptions().name("m"))->mix(x, at::ones({5, 3})); }, "got Float [5, 3]");
}

TEST(CutMix, ConformanceAndImagesAndLabelsAsKeras3) {
  torchfit::testing::expect_layer_conformance(
      CutMix().ptr(), torchfit::testing::LayerConformance({5, 6, 3}, {5, 6, 3}).training_changes_output(true));
  EXPECT_EQ(CutMixOptions().factor().values, (std::vector<double>{1.0}));
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor x = at::rand({4, 2, 5, 7}, at::kDouble) * 255.0;
  const at::Tensor labels =
      at::one_hot(at::tensor({0, 2, 1, 2}, at::kLong), 3).to(at::kDouble) * 0.8 + 0.2 / 3;  // smoothed
  CutMixDraws d;
  d.alpha = 0.5;
  d.lambdas = at::tensor({0.75, 0.1, 0.999, 0.4}, at::kDouble);
  d.starts = at::tensor({0.5, 0.5, 0.0, 1.0, 0.3, 0.6, 0.99, 0.01}, at::kDouble).view({4, 2});
  d.permutation = at::tensor({1, 0, 3, 2}, at::kLong);
  const nlohmann::json req = {{"op", "augment_cutmix"},
                              {"x", tensor_json(x)},
                              {"lambdas", {0.75, 0.1, 0.999, 0.4}},
                              {"starts", mix_pairs(d.starts)},
                              {"permutation", {1, 0, 3, 2}}};
  CutMix layer;
  const auto [images, mixed] = layer->mix(x, labels, d);
  torchfit::testing::expect_matches_reference(images, torchfit::testing::keras_reference(req), 1e-9);
  EXPECT_FALSE(at::equal(images, x));
  nlohmann::json label_req = req;
  label_req["labels"] = tensor_json(labels);
  torchfit::testing::expect_matches_reference(mixed, torchfit::testing::keras_reference(label_req), 1e-12);
}

TEST(CutMix, DrawsInKerasRangeSeededConfigAndErrors) {
  at::manual_seed(7);
  const at::Tensor batch = at::zeros({20000, 1, 4, 4});
  // factor [0.5, 0.5]: α = 0.5 + 1e-6, λ ~ Beta(α, α).
  const CutMixDraws d = CutMix(CutMixOptions().factor(KerasFactor(0.5, 0.5)))->draw(batch);
  EXPECT_DOUBLE_EQ(d.alpha, 0.5 + 1e-6);
  expect_beta_moments(d.lambdas, 0.5, 0.5);
  torchfit::testing::expect_covers_range(d.starts, 0.0, 1.0);
  EXPECT_EQ(mix_ints(std::get<0>(d.permutation.sort())), mix_ints(at::arange(20000)));
  // One α per batch, from [lower, upper) + 1e-6.
  std::vector<double> alphas;
  const CutMix ranged(CutMixOptions().factor(KerasFactor(0.6, 0.2)));
  for (int i = 0; i < 2000; ++i) alphas.push_back(ranged->draw(at::zeros({2, 1, 3, 3})).alpha);
  torchfit::testing::expect_covers_range(at::tensor(alphas, at::kDouble) - 1e-6, 0.2, 0.6);
  at::manual_seed(8);
  const at::Tensor x = at::rand({6, 3, 8, 8});
  torchfit::testing::expect_seeded_and_inference_identity([] { return CutMix().ptr(); }, x);
  CutMix layer;
  layer->train();
  at::manual_seed(31);
  const at::Tensor forward = layer->forward(x);
  at::manual_seed(31);
  const auto [images, labels] = layer->mix(x, at::one_hot(at::arange(6) % 3, 3).to(at::kFloat));
  EXPECT_TRUE(at::equal(images, forward)) << "mix() draws as the layer's forward";
  EXPECT_TRUE(at::allclose(labels.sum(1), at::ones({6})));
  const auto built = torchfit::testing::layer_from_keras3<CutMixImpl>(
      torchfit::testing::keras3_augmentation_layer("CutMix", "c", {{"factor", {0.0, 1.0}}}));
  ASSERT_TRUE(built);
  EXPECT_EQ(built->options.factor().values, (std::vector<double>{0.0, 1.0}));
  using torchfit::testing::expect_config_error;
  expect_config_error([] { CutMix(CutMixOptions().factor(1.5).name("c")); },
                      "layer 'c' (CutMix): factor must be a number in [0, 1] or a pair [lower, upper] with lower <= "
                      "1 and upper >= 0, got 1.5");
  expect_config_error([&] { CutMix(CutMixOptions().name("c"))->mix(x, at::ones({6})); },
                      "layer 'c' (CutMix): labels must be (N, K) floating point");
}
