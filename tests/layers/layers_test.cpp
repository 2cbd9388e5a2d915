// Tests of the built-in layers: shapes, parameter counts, gradients, config round-trip, bad input.
#include <gtest/gtest.h>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/registry.h>

#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

TEST(Conv2D, ValidShapeParamsGradConfig) {
  check_layer(Conv2D(Conv2DOptions(32, 3).activation("relu")).ptr(), {150, 150, 3}, {148, 148, 32}, 896);
}

TEST(Conv2D, SameStridedDilated) {
  check_layer(Conv2D(Conv2DOptions(8, {3, 5}).padding("same").strides(2)).ptr(), {9, 10, 2}, {5, 5, 8},
              3 * 5 * 2 * 8 + 8);
  check_layer(Conv2D(Conv2DOptions(4, 3).dilation_rate(2).use_bias(false)).ptr(), {9, 9, 1}, {5, 5, 4}, 36);
}

TEST(Conv2D, SamePaddingMatchesTensorFlowAsymmetricRule) {
  // in 4, k 2, s 2 → out 2, total pad 0; in 5, k 2, s 2 → out 3, total 1 at the end (bottom/right).
  Conv2D conv(Conv2DOptions(1, 2).padding("same").strides(2).use_bias(false).input_shape(Shape{5, 5, 1}));
  Sequential m;
  m->add(conv);
  {
    at::NoGradGuard g;
    conv->kernel.fill_(1.0);
  }
  auto x = at::ones({1, 1, 5, 5});
  auto y = m->forward(x);
  ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 1, 3, 3}));
  EXPECT_FLOAT_EQ(y[0][0][0][0].item<float>(), 4.0f);  // full window at the top-left
  EXPECT_FLOAT_EQ(y[0][0][2][2].item<float>(), 1.0f);  // bottom-right window: 1 real pixel + padding
}

TEST(Conv2D, BadInput) {
  EXPECT_THROW(Conv2D(Conv2DOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv2D(Conv2DOptions(4, 3).padding("full")), ConfigError);
  EXPECT_THROW(Conv2D(Conv2DOptions(4, 3).activation("swish")), ConfigError);
  Sequential m;
  try {
    m->add(Conv2D(Conv2DOptions(4, 5).input_shape(Shape{3, 3, 1})));
    FAIL() << "kernel larger than input accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("conv2d"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(None, 3, 3, 1)"), std::string::npos) << e.what();
  }
  Sequential m2;
  m2->add(Flatten(FlattenOptions().input_shape(Shape{4, 4, 1})));
  EXPECT_THROW(m2->add(Conv2D(Conv2DOptions(4, 3))), ConfigError);  // 1-D input
}

TEST(Dense, ShapeParamsGradConfig) {
  check_layer(Dense(DenseOptions(512).activation("relu")).ptr(), {82944}, {512}, 42467840);
  check_layer(Dense(DenseOptions(3).use_bias(false).activation("tanh")).ptr(), {5}, {3}, 15);
}

TEST(Dense, GlorotUniformKernelAndZeroBias) {
  at::manual_seed(1);
  Dense d(DenseOptions(200).input_shape(Shape{300}));
  Sequential m;
  m->add(d);
  const double limit = std::sqrt(6.0 / 500.0);
  EXPECT_LE(d->kernel.abs().max().item<double>(), limit);
  EXPECT_GT(d->kernel.abs().max().item<double>(), 0.95 * limit);
  EXPECT_NEAR(d->kernel.mean().item<double>(), 0.0, 0.01);
  EXPECT_EQ(d->bias.abs().sum().item<double>(), 0.0);
}

TEST(Dense, BadInput) {
  EXPECT_THROW(Dense(DenseOptions(0)), ConfigError);
  Sequential m;
  try {
    m->add(Dense(DenseOptions(4).input_shape(Shape{8, 8, 3})));
    FAIL() << "Dense on a 4-D input accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dense"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Flatten"), std::string::npos);
  }
}

TEST(MaxPooling2D, ShapesConfig) {
  check_layer(MaxPooling2D(MaxPooling2DOptions(2)).ptr(), {148, 148, 32}, {74, 74, 32}, 0);
  check_layer(MaxPooling2D(MaxPooling2DOptions(3).strides(std::vector<int64_t>{2, 2}).padding("same")).ptr(), {7, 8, 2},
              {4, 4, 2}, 0);
  Sequential m;
  EXPECT_THROW(m->add(MaxPooling2D(MaxPooling2DOptions(4).input_shape(Shape{3, 3, 1}))), ConfigError);
}

TEST(MaxPooling2D, TakesTheMaximum) {
  MaxPooling2D p(MaxPooling2DOptions(2).input_shape(Shape{2, 2, 1}));
  Sequential m;
  m->add(p);
  auto x = at::tensor({1.0f, 5.0f, -2.0f, 3.0f}).reshape({1, 1, 2, 2});
  EXPECT_FLOAT_EQ(m->forward(x).item<float>(), 5.0f);
}

TEST(Flatten, NchwOrder) {
  check_layer(Flatten().ptr(), {36, 36, 64}, {82944}, 0);
  Flatten f(FlattenOptions().input_shape(Shape{1, 2, 2}));  // H=1, W=2, C=2
  Sequential m;
  m->add(f);
  auto x = at::arange(4, at::kFloat).reshape({1, 2, 1, 2});  // (N, C, H, W)
  auto y = m->forward(x);
  EXPECT_TRUE(at::equal(y, at::arange(4, at::kFloat).reshape({1, 4})));  // channel-major
}

TEST(Dropout, EvalIsIdentityAndBitIdentical) {
  Sequential m;
  m->add(Dense(DenseOptions(4).input_shape(Shape{4})));
  m->add(Dropout(DropoutOptions(0.5)));
  m->eval();
  auto x = at::ones({1, 4});
  auto a = m->forward(x);
  auto b = m->forward(x);
  EXPECT_TRUE(at::equal(a, b));
}

TEST(Dropout, TrainZeroesAboutHalfAndScalesByTwo) {
  at::manual_seed(3);
  Dropout d(DropoutOptions(0.5));
  d->build({100000});
  d->train();
  auto y = d->forward(at::ones({1, 100000}));
  const double zero_share = (y == 0).to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(zero_share, 0.5, 0.01);
  auto kept = y.masked_select(y != 0);
  EXPECT_TRUE(at::allclose(kept, at::full_like(kept, 2.0)));
}

TEST(Dropout, BadRate) {
  EXPECT_THROW(Dropout(DropoutOptions(1.0)), ConfigError);
  EXPECT_THROW(Dropout(DropoutOptions(-0.1)), ConfigError);
  // Dropout's train() output differs from its eval() output: the conformance check asserts it.
  torchfit::testing::expect_layer_conformance(
      Dropout(DropoutOptions(0.3)).ptr(), torchfit::testing::LayerConformance({7}, {7}).training_changes_output(true));
  torchfit::testing::expect_layer_conformance(
      Dropout(DropoutOptions(0.5)).ptr(),
      torchfit::testing::LayerConformance({3, 3, 2}, {3, 3, 2}).training_changes_output(true));
}

TEST(Activation, ValuesAndConfig) {
  check_layer(Activation("tanh").ptr(), {3, 3, 2}, {3, 3, 2}, 0);
  Activation soft("softmax");
  soft->build({3});
  auto y = soft->forward(at::tensor({1.0f, 2.0f, 3.0f}).reshape({1, 3}));
  EXPECT_NEAR(y.sum().item<double>(), 1.0, 1e-6);
  const double expected = std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(y[0][2].item<double>(), expected, 1e-6);
  Activation relu("relu");
  relu->build({2});
  EXPECT_TRUE(
      at::equal(relu->forward(at::tensor({-1.0f, 2.0f}).reshape({1, 2})), at::tensor({0.0f, 2.0f}).reshape({1, 2})));
  EXPECT_THROW(Activation("gelu2"), ConfigError);
}

TEST(Registry, UnknownClassAndBadField) {
  try {
    layer_from_json({{"class_name", "Conv3D"}, {"config", nlohmann::json::object()}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Conv3D"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Dense"), std::string::npos);  // lists the known ones
  }
  try {
    layer_from_json({{"class_name", "Dense"}, {"config", {{"name", "d9"}, {"units", "many"}}}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("d9"), std::string::npos) << e.what();
  }
}

TEST(Naming, KerasSnakeCase) {
  EXPECT_EQ(keras_snake_case("Conv2D"), "conv2d");
  EXPECT_EQ(keras_snake_case("MaxPooling2D"), "max_pooling2d");
  EXPECT_EQ(keras_snake_case("BatchNormalization"), "batch_normalization");
  EXPECT_EQ(keras_snake_case("GlobalAveragePooling2D"), "global_average_pooling2d");
}
