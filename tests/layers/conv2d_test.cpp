// Conv2D: shapes, parameters, gradients and config; strides, "same" (TensorFlow's asymmetric rule) and
// dilation_rate with known outputs; bad input.
#include <gtest/gtest.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {
at::Tensor conv_ones(Conv2DOptions o, const Shape& keras_in, const at::Tensor& x) {
  Conv2D conv(o.use_bias(false).input_shape(keras_in));
  Sequential m;
  m->add(conv);
  {
    at::NoGradGuard g;
    conv->kernel.fill_(1.0);
  }
  return m->forward(x);
}
}  // namespace

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
  EXPECT_THROW(Conv2D(Conv2DOptions(4, 3).activation("hard_tanh")), ConfigError);
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

TEST(Conv2D, StridesPickEveryOtherPixel) {
  // 1×1 kernel of ones, stride 2, valid: x[0,0], x[0,2], x[2,0], x[2,2] of a 4×4 arange.
  auto y = conv_ones(Conv2DOptions(1, 1).strides(2), {4, 4, 1}, at::arange(16, at::kFloat).reshape({1, 1, 4, 4}));
  EXPECT_TRUE(at::equal(y, at::tensor({0.0f, 2.0f, 8.0f, 10.0f}).reshape({1, 1, 2, 2}))) << y;
}

TEST(Conv2D, SameStridedCountsRealPixels) {
  // 5×5 ones, 3×3 ones kernel, stride 2, same: out 3×3, pad 1 each side → corners 4, edges 6, centre 9.
  auto y = conv_ones(Conv2DOptions(1, 3).strides(2).padding("same"), {5, 5, 1}, at::ones({1, 1, 5, 5}));
  auto want = at::tensor({4.0f, 6.0f, 4.0f, 6.0f, 9.0f, 6.0f, 4.0f, 6.0f, 4.0f}).reshape({1, 1, 3, 3});
  EXPECT_TRUE(at::equal(y, want)) << y;
}

TEST(Conv2D, DilationValidAndSame) {
  // valid: 3×3 kernel with dilation 2 on a 5×5 arange reads rows/cols {0, 2, 4}: sum of 5r + c = 108.
  auto y = conv_ones(Conv2DOptions(1, 3).dilation_rate(2), {5, 5, 1}, at::arange(25, at::kFloat).reshape({1, 1, 5, 5}));
  ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FLOAT_EQ(y.item<float>(), 108.0f);
  // same with dilation 3 on 7×7 ones: size kept; the corner sees taps at offsets {0, 3} only → 4; centre 9.
  auto z = conv_ones(Conv2DOptions(1, 3).dilation_rate(3).padding("same"), {7, 7, 1}, at::ones({1, 1, 7, 7}));
  ASSERT_EQ(z.sizes().vec(), (std::vector<int64_t>{1, 1, 7, 7}));
  EXPECT_FLOAT_EQ(z[0][0][0][0].item<float>(), 4.0f);
  EXPECT_FLOAT_EQ(z[0][0][3][3].item<float>(), 9.0f);
  EXPECT_FLOAT_EQ(z[0][0][6][6].item<float>(), 4.0f);
}

TEST(Conv2D, ConformanceWithStridesSameDilation) {
  expect_layer_conformance(Conv2D(Conv2DOptions(4, 3).strides({2, 1}).padding("same").activation("gelu")).ptr(),
                           LayerConformance({9, 6, 2}, {5, 6, 4}).trainable_params(3 * 3 * 2 * 4 + 4));
  expect_layer_conformance(Conv2D(Conv2DOptions(2, 2).dilation_rate({1, 2}).strides(2)).ptr(),
                           LayerConformance({6, 7, 3}, {3, 3, 2}).trainable_params(2 * 2 * 3 * 2 + 2));
}

// Values against the float64 NumPy reference of TensorFlow's conv2d (tests/layers/reference/): odd sizes,
// stride 2 and (2, 3), "same" (pad_before = total // 2, the odd pixel after) and "valid", dilation.
TEST(Conv2D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    std::vector<int64_t> in, kernel, strides, dilation;
    std::string padding;
  };
  for (const Case& c :
       {Case{{7, 9, 3}, {3, 3}, {2, 2}, {1, 1}, "same"}, Case{{7, 9, 3}, {2, 4}, {2, 2}, {1, 1}, "same"},
        Case{{8, 7, 2}, {4, 3}, {2, 3}, {1, 1}, "same"}, Case{{9, 9, 2}, {3, 3}, {2, 2}, {2, 1}, "same"},
        Case{{7, 9, 3}, {3, 2}, {2, 2}, {1, 1}, "valid"}, Case{{5, 5, 1}, {1, 1}, {2, 2}, {1, 1}, "same"}}) {
    SCOPED_TRACE(c.padding + " input " + format_shape(c.in));
    Conv2D conv(Conv2DOptions(4, {c.kernel[0], c.kernel[1]})
                    .strides({c.strides[0], c.strides[1]})
                    .dilation_rate({c.dilation[0], c.dilation[1]})
                    .padding(c.padding));
    at::manual_seed(3);
    auto [x, y] = torchfit::testing::random_forward(conv.ptr(), c.in);
    {
      at::NoGradGuard g;
      conv->bias.uniform_(-1, 1);
    }
    y = conv->forward(x).detach();
    nlohmann::json req = {{"op", "conv2d"},
                          {"x", torchfit::testing::tensor_json(x)},
                          {"kernel", torchfit::testing::tensor_json(conv->kernel.permute({2, 3, 1, 0}))},
                          {"bias", torchfit::testing::tensor_json(conv->bias)},
                          {"strides", c.strides},
                          {"dilation_rate", c.dilation},
                          {"padding", c.padding}};
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
  }
}
