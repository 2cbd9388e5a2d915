// Dense: shapes, parameters, gradients and config; glorot_uniform kernel and zero bias; bad input.
#include <gtest/gtest.h>

#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

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
