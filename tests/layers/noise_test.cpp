// The training-only noise layers (GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D/3D) against
// the moments and masks Keras's definitions give, pass-through at inference, conformance and bad arguments;
// RepeatVector and Identity.
#include <gtest/gtest.h>

#include <cmath>

#include <torchfit/layers/noise.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/repeat_vector.h>
#include <torchfit/testing/layer_conformance.h>

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace noise_test {

// `layer` built for `in`, in train() mode, on `x`.
at::Tensor train_forward(const std::shared_ptr<Layer>& layer, const Shape& in, const at::Tensor& x) {
  layer->build(in);
  layer->train();
  at::NoGradGuard no_grad;
  return layer->forward(x);
}

TEST(GaussianNoise, AddsNoiseOfStddevInTrainingOnly) {
  at::manual_seed(1);
  GaussianNoise layer(GaussianNoiseOptions(0.7));
  const at::Tensor x = at::full({4, 50000}, 2.0f);
  const at::Tensor noise = train_forward(layer.ptr(), {50000}, x) - x;
  EXPECT_NEAR(noise.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(noise.std().item<double>(), 0.7, 0.01);
  layer->eval();
  EXPECT_TRUE(at::equal(layer->forward(x), x));
  expect_layer_conformance(GaussianNoise(GaussianNoiseOptions(0.3)).ptr(),
                           LayerConformance({3, 4, 2}, {3, 4, 2}).training_changes_output(true));
  EXPECT_THROW(GaussianNoise(GaussianNoiseOptions(-0.1)), ConfigError);
  EXPECT_THROW(GaussianNoise(GaussianNoiseOptions(std::nan(""))), ConfigError);
}

TEST(GaussianDropout, MultipliesByNoiseOfMeanOneAndKerasStddev) {
  at::manual_seed(2);
  const double rate = 0.3;
  GaussianDropout layer{NoiseDropoutOptions(rate)};
  const at::Tensor factor = train_forward(layer.ptr(), {100000}, at::ones({2, 100000}));
  EXPECT_NEAR(factor.mean().item<double>(), 1.0, 0.01);
  EXPECT_NEAR(factor.std().item<double>(), std::sqrt(rate / (1 - rate)), 0.01);  // Keras: sqrt(rate / (1 - rate))
  expect_layer_conformance(GaussianDropout(NoiseDropoutOptions(0.2)).ptr(),
                           LayerConformance({7}, {7}).training_changes_output(true));
  for (double bad : {-0.1, 1.0}) {
    try {
      GaussianDropout(NoiseDropoutOptions(bad));
      ADD_FAILURE() << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("(GaussianDropout): rate must be in [0, 1)"), std::string::npos) << e.what();
    }
  }
}

// Keras's AlphaDropout keeps a standard normal input at mean 0 and variance 1; a dropped element becomes
// a·α' + b, a kept one a·x + b (a, b from Keras's formulas).
TEST(AlphaDropout, KeepsZeroMeanUnitVarianceWithKerasAffineMap) {
  at::manual_seed(3);
  const double rate = 0.2, alpha_p = -1.6732632423543772848170429916717 * 1.0507009873554804934193349852946;
  const double a = std::pow((1 - rate) * (1 + rate * alpha_p * alpha_p), -0.5), b = -a * alpha_p * rate;
  AlphaDropout layer{NoiseDropoutOptions(rate)};
  const at::Tensor x = at::randn({4, 100000});
  const at::Tensor y = train_forward(layer.ptr(), {100000}, x);
  EXPECT_NEAR(y.mean().item<double>(), 0.0, 0.01);
  EXPECT_NEAR(y.var().item<double>(), 1.0, 0.01);
  const at::Tensor dropped = (y - (a * alpha_p + b)).abs() < 1e-5;
  EXPECT_NEAR(dropped.to(at::kFloat).mean().item<double>(), rate, 0.01);
  const at::Tensor kept = ~dropped;
  EXPECT_TRUE(at::allclose(y.masked_select(kept), x.masked_select(kept) * a + b, 1e-5, 1e-5));
  expect_layer_conformance(AlphaDropout(NoiseDropoutOptions(0.1)).ptr(),
                           LayerConformance({3, 5}, {3, 5}).training_changes_output(true));
}

TEST(SpatialDropout, DropsWholeChannelsAndScalesTheRest) {
  at::manual_seed(4);
  const double rate = 0.4;
  // 2-D: one draw per (sample, feature map) of (N, C, H, W).
  const at::Tensor image = at::rand({64, 32, 5, 6}) + 1.0;
  const at::Tensor y2 = train_forward(SpatialDropout2D(NoiseDropoutOptions(rate)).ptr(), {5, 6, 32}, image);
  const at::Tensor ratio2 = (y2 / image).flatten(2);
  EXPECT_TRUE(at::allclose(ratio2.amin(2), ratio2.amax(2))) << "a feature map was partly dropped";
  const at::Tensor zero2 = ratio2.select(2, 0) == 0;
  EXPECT_NEAR(zero2.to(at::kFloat).mean().item<double>(), rate, 0.05);
  EXPECT_TRUE(at::allclose(ratio2.select(2, 0).masked_select(~zero2), at::full({1}, 1 / (1 - rate)), 1e-5, 1e-5));
  // 1-D: (N, steps, C), one draw per (sample, channel), the same for every step.
  const at::Tensor seq = at::rand({64, 7, 32}) + 1.0;
  const at::Tensor ratio1 = train_forward(SpatialDropout1D(NoiseDropoutOptions(rate)).ptr(), {7, 32}, seq) / seq;
  EXPECT_TRUE(at::allclose(ratio1.amin(1), ratio1.amax(1))) << "a channel was dropped at some steps only";
  EXPECT_NEAR((ratio1.select(1, 0) == 0).to(at::kFloat).mean().item<double>(), rate, 0.05);
  expect_layer_conformance(SpatialDropout2D(NoiseDropoutOptions(0.5)).ptr(),
                           LayerConformance({4, 4, 8}, {4, 4, 8}).training_changes_output(true));
  expect_layer_conformance(SpatialDropout1D(NoiseDropoutOptions(0.5)).ptr(),
                           LayerConformance({6, 8}, {6, 8}).training_changes_output(true));
  EXPECT_THROW(SpatialDropout1D(NoiseDropoutOptions(0.5))->build({4, 4, 8}), ConfigError);
  EXPECT_THROW(SpatialDropout2D(NoiseDropoutOptions(0.5))->build({8}), ConfigError);
}

TEST(RepeatVector, RepeatsTheVectorAlongANewStepAxis) {
  RepeatVector layer(RepeatVectorOptions(3));
  const at::Tensor x = at::randn({2, 5});
  const at::Tensor y = train_forward(layer.ptr(), {5}, x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 3, 5}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(at::equal(y.select(1, i), x));
  EXPECT_EQ(layer->output_shape(), (Shape{3, 5}));
  expect_layer_conformance(RepeatVector(RepeatVectorOptions(4)).ptr(), LayerConformance({6}, {4, 6}));
  EXPECT_THROW(RepeatVector(RepeatVectorOptions(0)), ConfigError);
  EXPECT_THROW(RepeatVector(RepeatVectorOptions(2))->build({3, 4}), ConfigError);
  expect_layer_conformance(Identity().ptr(), LayerConformance({3, 4, 2}, {3, 4, 2}));
}

// SpatialDropout3D: Keras's noise_shape (N, 1, 1, 1, C) — one draw per (sample, channel) for every voxel —
// the kept channels scaled by 1/(1 − rate), identity at inference.
TEST(SpatialDropout, DropsWholeChannelsOfAVolume) {
  const double rate = 0.4;
  const at::Tensor volume = at::rand({64, 3, 4, 5, 32}) + 1.0;  // Keras (D, H, W, C), held in Keras's order
  const at::Tensor ratio =
      (train_forward(SpatialDropout3D(NoiseDropoutOptions(rate)).ptr(), {3, 4, 5, 32}, volume) / volume)
          .flatten(1, 3);  // (N, D·H·W, C)
  EXPECT_TRUE(at::allclose(ratio.amin(1), ratio.amax(1))) << "a channel was dropped at some voxels only";
  const at::Tensor zero = ratio.select(1, 0) == 0;
  EXPECT_NEAR(zero.to(at::kFloat).mean().item<double>(), rate, 0.05);
  EXPECT_TRUE(at::allclose(ratio.select(1, 0).masked_select(~zero), at::full({1}, 1 / (1 - rate)), 1e-5, 1e-5));
  SpatialDropout3D eval_layer{NoiseDropoutOptions(rate)};
  eval_layer->build({3, 4, 5, 32});
  eval_layer->eval();
  EXPECT_TRUE(at::equal(eval_layer->forward(volume), volume));
  expect_layer_conformance(SpatialDropout3D(NoiseDropoutOptions(0.5)).ptr(),
                           LayerConformance({3, 4, 4, 8}, {3, 4, 4, 8}).training_changes_output(true));
  try {
    SpatialDropout3D(NoiseDropoutOptions(0.5).name("sd3"))->build({4, 4, 8});
    FAIL() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'sd3' (SpatialDropout3D) expects a volume (D, H, W, C)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(SpatialDropout3D(NoiseDropoutOptions(1.0)), ConfigError);
  auto layer = layer_from_json({{"class_name", "SpatialDropout3D"}, {"config", {{"name", "s"}, {"rate", 0.25}}}});
  EXPECT_EQ(layer->config(), (nlohmann::json{{"name", "s"}, {"rate", 0.25}}));
}

}  // namespace noise_test
