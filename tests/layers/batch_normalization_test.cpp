// BatchNormalization: Keras defaults, known values in train and eval, moving statistics, parameter counts,
// batch-of-one error, conformance, and moving statistics surviving a checkpoint.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/testing/layer_conformance.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(BatchNormalization, KerasDefaults) {
  BatchNormalization bn;
  EXPECT_DOUBLE_EQ(bn->options.momentum(), 0.99);
  EXPECT_DOUBLE_EQ(bn->options.epsilon(), 1e-3);
  auto c = bn->config();
  EXPECT_EQ(c["momentum"], 0.99);
  EXPECT_EQ(c["epsilon"], 1e-3);
  EXPECT_EQ(c["center"], true);
  EXPECT_EQ(c["scale"], true);
}

TEST(BatchNormalization, Conformance) {
  // 4·C parameters, 2·C of them (moving_mean, moving_variance) non-trainable, as Keras counts them.
  expect_layer_conformance(
      BatchNormalization().ptr(),
      LayerConformance({5, 5, 3}, {5, 5, 3}).trainable_params(6).non_trainable_params(6).training_changes_output(true));
  expect_layer_conformance(
      BatchNormalization().ptr(),
      LayerConformance({6}, {6}).trainable_params(12).non_trainable_params(12).training_changes_output(true));
  expect_layer_conformance(BatchNormalization(BatchNormalizationOptions().center(false).scale(false)).ptr(),
                           LayerConformance({4}, {4}).non_trainable_params(8).training_changes_output(true));
}

TEST(BatchNormalization, KnownValuesTrainThenEval) {
  BatchNormalization bn(BatchNormalizationOptions().input_shape(Shape{1}));
  Sequential m;
  m->add(bn);
  m->train();
  auto x = at::tensor({1.0f, 3.0f}).reshape({2, 1});
  // Train: batch mean 2, biased variance 1 → (x − 2) / sqrt(1 + 1e-3).
  auto y = m->forward(x);
  const double s = 1.0 / std::sqrt(1.0 + 1e-3);
  EXPECT_NEAR(y[0][0].item<double>(), -s, 1e-6);
  EXPECT_NEAR(y[1][0].item<double>(), s, 1e-6);
  // Moving statistics: moving·0.99 + batch·0.01 (mean 2; unbiased variance 2 for the update).
  EXPECT_NEAR(bn->moving_mean.item<double>(), 0.02, 1e-7);
  EXPECT_NEAR(bn->moving_variance.item<double>(), 0.99 * 1.0 + 0.01 * 2.0, 1e-6);
  // Eval uses the moving statistics.
  m->eval();
  auto e = m->forward(x);
  EXPECT_NEAR(e[0][0].item<double>(), (1.0 - 0.02) / std::sqrt(1.01 + 1e-3), 1e-6);
  EXPECT_NEAR(e[1][0].item<double>(), (3.0 - 0.02) / std::sqrt(1.01 + 1e-3), 1e-6);
  // Eval does not move the statistics.
  EXPECT_NEAR(bn->moving_mean.item<double>(), 0.02, 1e-7);
}

TEST(BatchNormalization, NormalisesPerChannelOfImages) {
  BatchNormalization bn(BatchNormalizationOptions().input_shape(Shape{3, 3, 2}));
  Sequential m;
  m->add(bn);
  m->train();
  at::manual_seed(0);
  auto x = at::randn({4, 2, 3, 3}) * at::tensor({10.0f, 0.1f}).reshape({1, 2, 1, 1}) + 5;
  auto y = m->forward(x);
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(y.select(1, c).mean().item<double>(), 0.0, 1e-5);
    EXPECT_NEAR(y.select(1, c).var(/*unbiased=*/false).item<double>(), 1.0, 0.1);  // ε shrinks channel 1
  }
  EXPECT_EQ(bn->count_params(), 8);
  EXPECT_EQ(bn->non_trainable_params(), 4);
}

TEST(BatchNormalization, SummaryCountsMovingStatisticsAsNonTrainable) {
  Sequential m;
  m->add(Dense(DenseOptions(8).input_shape(Shape{4})));
  m->add(BatchNormalization());
  EXPECT_EQ(m->layers()[1]->name(), "batch_normalization");
  const auto text = m->summary();
  // Keras cuts the name column at 28 characters + a space; Param # starts at column 55.
  const std::string row = "batch_normalization (BatchNo (None, 8)" + std::string(55 - 38, ' ') + "32";
  EXPECT_NE(text.find(row), std::string::npos) << text;
  EXPECT_NE(text.find("Total params: 72\nTrainable params: 56\nNon-trainable params: 16\n"), std::string::npos) << text;
}

TEST(BatchNormalization, TrainingBatchOfOneIsAClearError) {
  BatchNormalization bn(BatchNormalizationOptions().input_shape(Shape{4}).name("bn"));
  Sequential m;
  m->add(bn);
  m->train();
  try {
    m->forward(at::ones({1, 4}));
    FAIL() << "a training batch of one sample was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'bn' (BatchNormalization)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("batch_size >= 2"), std::string::npos) << msg;
  }
  m->eval();
  EXPECT_EQ(m->forward(at::ones({1, 4})).size(0), 1);  // eval: moving statistics, fine
  // One image still has many values per channel: allowed, as in Keras.
  BatchNormalization bn2(BatchNormalizationOptions().input_shape(Shape{2, 2, 3}));
  Sequential m2;
  m2->add(bn2);
  m2->train();
  EXPECT_EQ(m2->forward(at::randn({1, 3, 2, 2})).sizes().vec(), (std::vector<int64_t>{1, 3, 2, 2}));
}

TEST(BatchNormalization, BadArguments) {
  EXPECT_THROW(BatchNormalization(BatchNormalizationOptions().momentum(1.0)), ConfigError);
  EXPECT_THROW(BatchNormalization(BatchNormalizationOptions().epsilon(0.0)), ConfigError);
  EXPECT_THROW(BatchNormalization(BatchNormalizationOptions().axis_order("th")), ConfigError);
  Sequential m;  // Keras axis 3 of a (N, D) input: outside it
  EXPECT_THROW(m->add(BatchNormalization(BatchNormalizationOptions().axis(3).input_shape(Shape{4}))), ConfigError);
  Sequential m2;  // the batch axis
  EXPECT_THROW(m2->add(BatchNormalization(BatchNormalizationOptions().axis(KerasAxes({0})).input_shape(Shape{4}))),
               ConfigError);
  Sequential m3;  // several axes
  EXPECT_THROW(
      m3->add(BatchNormalization(BatchNormalizationOptions().axis(KerasAxes({1, 3})).input_shape(Shape{2, 2, 3}))),
      ConfigError);
}

// Keras resolves the axis against the input's rank at build: on a (D) input −1, 1 and [1] are the features
// (tf.keras 2.x writes [1] after a Dense); on (H, W, C) −1, 3 and [3] are the channels; in a Keras 1 "th"
// model the axis counts over (N, C, H, W): 1 is the channels and −1 the width.
TEST(BatchNormalization, AxisIsResolvedAgainstTheInputRank) {
  // (axis, input, tensor axis normalised); the axis's size is 5 in each.
  const std::vector<std::tuple<KerasAxes, Shape, int64_t>> cases = {
      {KerasAxes(-1), {5}, 1},        {KerasAxes(1), {5}, 1},        {KerasAxes({1}), {5}, 1},
      {KerasAxes({-1}), {5}, 1},      {KerasAxes(-1), {2, 3, 5}, 1}, {KerasAxes(3), {2, 3, 5}, 1},
      {KerasAxes({3}), {2, 3, 5}, 1}, {KerasAxes(-3), {5, 2, 3}, 2}, {KerasAxes(-1), {3, 5}, 2}};
  for (const auto& [axis, shape, tensor_axis] : cases) {
    BatchNormalization bn(BatchNormalizationOptions().axis(axis).input_shape(shape));
    Sequential m;
    m->add(bn);
    SCOPED_TRACE(nlohmann::json(axis).dump() + " on " + format_shape(shape));
    EXPECT_EQ(bn->moving_mean.numel(), 5);
    EXPECT_EQ(bn->tensor_axis(), tensor_axis);
  }
  const auto th_axis = [](const KerasAxes& axis, const Shape& shape) {
    BatchNormalization bn(BatchNormalizationOptions().axis(axis).axis_order("channels_first").input_shape(shape));
    Sequential m;
    m->add(bn);
    return bn->tensor_axis();
  };
  EXPECT_EQ(th_axis(KerasAxes(1), {4, 6, 3}), 1);   // (N, C, H, W) axis 1: the channels
  EXPECT_EQ(th_axis(KerasAxes(-1), {4, 6, 3}), 3);  // the width: tensor (N, C, H, W) axis 3
  EXPECT_EQ(th_axis(KerasAxes(2), {4, 6, 3}), 2);   // the height
  EXPECT_EQ(th_axis(KerasAxes(-1), {6}), 1);        // after a Dense: the features, in both orders
  BatchNormalization th(BatchNormalizationOptions().axis(1).axis_order("channels_first"));
  EXPECT_EQ(th->config()["axis_order"], "channels_first");
  EXPECT_FALSE(BatchNormalization()->config().contains("axis_order")) << "not a Keras argument";
  EXPECT_EQ(BatchNormalization(BatchNormalizationOptions().axis(KerasAxes({1})))->config()["axis"],
            nlohmann::json::array({1}));
}

// BatchNorm1d on (N, D) with Keras's arguments, against the formulas computed here in double: training
// normalises with the batch mean and biased variance, the moving statistics move by
// moving·momentum + batch·(1 − momentum) (the unbiased variance, see the class docs), eval uses them with
// Keras's epsilon. And a (T, D) input normalised on axis 1 (T statistics over N and D).
TEST(BatchNormalization, VectorAndRowInputsMatchTheFormulas) {
  at::manual_seed(11);
  for (const bool rows : {false, true}) {
    SCOPED_TRACE(rows ? "(T, D) axis 1" : "(D) axis [1]");
    const Shape shape = rows ? Shape{3, 4} : Shape{3};
    BatchNormalization bn(
        BatchNormalizationOptions().axis(KerasAxes({1})).momentum(0.9).epsilon(0.01).input_shape(shape));
    Sequential m;
    m->add(bn);
    {
      at::NoGradGuard g;
      bn->gamma.copy_(at::tensor({0.5f, 2.0f, 1.5f}));
      bn->beta.copy_(at::tensor({0.1f, -0.2f, 0.3f}));
      bn->moving_mean.copy_(at::tensor({0.2f, -0.1f, 0.0f}));
      bn->moving_variance.copy_(at::tensor({1.5f, 0.5f, 1.0f}));
    }
    const at::Tensor x = rows ? at::randn({5, 3, 4}) * 3 + 1 : at::randn({5, 3}) * 3 + 1;
    const at::Tensor xd = x.to(at::kDouble);
    m->eval();
    const at::Tensor e = m->forward(x).to(at::kDouble);
    m->train();
    const at::Tensor y = m->forward(x).to(at::kDouble);
    const int64_t per = x.numel() / 3;
    for (int64_t c = 0; c < 3; ++c) {
      const at::Tensor v = xd.select(1, c).reshape({-1});
      double mean = 0, ss = 0;
      for (int64_t i = 0; i < per; ++i) mean += v[i].item<double>();
      mean /= static_cast<double>(per);
      for (int64_t i = 0; i < per; ++i) ss += std::pow(v[i].item<double>() - mean, 2);
      const double g = std::vector<double>{0.5, 2.0, 1.5}[c], b = std::vector<double>{0.1, -0.2, 0.3}[c];
      const double mm = std::vector<double>{0.2, -0.1, 0.0}[c], mv = std::vector<double>{1.5, 0.5, 1.0}[c];
      const at::Tensor yc = y.select(1, c).reshape({-1}), ec = e.select(1, c).reshape({-1});
      for (int64_t i = 0; i < per; ++i) {
        const double xi = v[i].item<double>();
        EXPECT_NEAR(yc[i].item<double>(), g * (xi - mean) / std::sqrt(ss / per + 0.01) + b, 1e-5);
        EXPECT_NEAR(ec[i].item<double>(), g * (xi - mm) / std::sqrt(mv + 0.01) + b, 1e-5);
      }
      EXPECT_NEAR(bn->moving_mean[c].item<double>(), 0.9 * mm + 0.1 * mean, 1e-5);
      EXPECT_NEAR(bn->moving_variance[c].item<double>(), 0.9 * mv + 0.1 * ss / (per - 1), 1e-4);
    }
  }
}

TEST(BatchNormalization, MovingStatisticsSurviveACheckpoint) {
  torchfit::testing::TempDir dir("bn");
  at::manual_seed(0);
  Sequential model;
  model->add(Dense(DenseOptions(6).activation("relu").input_shape(Shape{3})));
  model->add(BatchNormalization());
  model->add(Dense(DenseOptions(2).activation("softmax")));
  auto x = at::randn({16, 3}) * 3 + 2;
  auto y = at::one_hot((x.sum(1) > 6).to(at::kLong), 2).to(at::kFloat);
  data::TensorIterator it(x, y, 4);
  Trainer trainer(model, CompileOptions().loss("categorical_crossentropy"));
  trainer.fit(it, FitOptions().epochs(1).steps_per_epoch(4).verbose(0));
  auto bn = std::dynamic_pointer_cast<BatchNormalizationImpl>(model->layers()[1]);
  ASSERT_TRUE(bn);
  EXPECT_GT(bn->moving_mean.abs().sum().item<double>(), 0.0);  // moved during fit
  const auto path = dir.str() + "/bn.ckpt";
  trainer.save_checkpoint(path);
  auto loaded = saving::load_model(path);
  model->eval();
  loaded->eval();
  auto bn2 = std::dynamic_pointer_cast<BatchNormalizationImpl>(loaded->layers()[1]);
  EXPECT_TRUE(at::equal(bn2->moving_mean, bn->moving_mean));
  EXPECT_TRUE(at::equal(bn2->moving_variance, bn->moving_variance));
  EXPECT_TRUE(at::equal(loaded->forward(x), model->forward(x)));
}
