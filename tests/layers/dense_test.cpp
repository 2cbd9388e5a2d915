// Dense: shapes, parameters, gradients and config; glorot_uniform kernel and zero bias; bad input.
#include <gtest/gtest.h>

#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
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
  EXPECT_THROW(Dense(DenseOptions(4).activation("relu7")), ConfigError);
}

// Keras 3 applies the kernel to the last axis of any rank: a sequence (L, D) held (N, L, D), an image
// (H, W, C) held (N, C, H, W) over its channels, and a rank-4 volume, against NumPy's matmul.
TEST(Dense, AnyRankAppliesTheKernelToTheLastKerasAxis) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  for (const Shape& in : {Shape{5, 6}, Shape{3, 4, 6}, Shape{2, 3, 2, 6}}) {
    SCOPED_TRACE(format_shape(in));
    Dense layer(DenseOptions(4).activation("linear"));
    auto [x, y] = torchfit::testing::random_forward(layer.ptr(), in, 3);
    at::manual_seed(3);
    layer->bias.data().copy_(at::randn({4}));
    {
      at::NoGradGuard no_grad;
      y = layer->forward(x);
    }
    const at::Tensor reference =
        torchfit::testing::keras_reference({{"op", "dense"},
                                            {"x", torchfit::testing::tensor_json(x)},
                                            {"kernel", torchfit::testing::tensor_json(layer->keras_weights()[0])},
                                            {"bias", torchfit::testing::tensor_json(layer->bias)}});
    torchfit::testing::expect_matches_reference(y, reference);
    Shape out = in;
    out.back() = 4;
    EXPECT_EQ(layer->output_shape(), out);
  }
  // An image in channels_last memory (as a Sequential passes it on the CPU) gives the same values.
  Dense layer(DenseOptions(3));
  auto [x, y] = torchfit::testing::random_forward(layer.ptr(), {4, 5, 6}, 2);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(layer->forward(x.contiguous(at::MemoryFormat::ChannelsLast)), y, 1e-6, 1e-6));
}

TEST(Dense, AnyRankConformance) {
  using torchfit::testing::LayerConformance;
  torchfit::testing::expect_layer_conformance(Dense(DenseOptions(4).activation("relu")).ptr(),
                                              LayerConformance({5, 6}, {5, 4}).trainable_params(28));
  torchfit::testing::expect_layer_conformance(Dense(DenseOptions(4).activation("softmax")).ptr(),
                                              LayerConformance({3, 4, 6}, {3, 4, 4}).trainable_params(28));
}
