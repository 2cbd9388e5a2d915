// DepthwiseConv2D: parameter count k·k·C·m + C·m, channel order c·m + j, padding/strides/dilation.
#include <gtest/gtest.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(DepthwiseConv2D, ParameterCountAndConformance) {
  // 3·3·C·m + C·m with C = 3, m = 2: 54 + 6.
  expect_layer_conformance(DepthwiseConv2D(DepthwiseConv2DOptions(3).depth_multiplier(2)).ptr(),
                           LayerConformance({8, 8, 3}, {6, 6, 6}).trainable_params(60));
  expect_layer_conformance(
      DepthwiseConv2D(DepthwiseConv2DOptions({3, 2}).padding("same").strides(2).use_bias(false)).ptr(),
      LayerConformance({7, 6, 4}, {4, 3, 4}).trainable_params(3 * 2 * 4));
  expect_layer_conformance(DepthwiseConv2D(DepthwiseConv2DOptions(3).dilation_rate(2).activation("relu")).ptr(),
                           LayerConformance({9, 9, 2}, {5, 5, 2}).trainable_params(20));
}

namespace {
// Output channel o = c·m + j gets kernel value o + 1; input channel c is constant c + 1 (3×3 input, 3×3
// valid kernel, so each output is 9 · (o + 1) · (c + 1)).
at::Tensor depthwise_of_constants(const std::string& memory_format) {
  DepthwiseConv2D dw(DepthwiseConv2DOptions(3).depth_multiplier(2).input_shape(Shape{3, 3, 2}));
  Sequential m;
  m->add(dw);
  m->set_memory_format(memory_format);
  {
    at::NoGradGuard g;
    for (int64_t o = 0; o < 4; ++o) dw->depthwise_kernel[o].fill_(static_cast<double>(o + 1));
  }
  auto x = at::stack({at::full({3, 3}, 1.0f), at::full({3, 3}, 2.0f)}).unsqueeze(0);
  return m->forward(x);
}
}  // namespace

// Both memory formats: channels_last on the CPU goes through oneDNN's grouped convolution, contiguous
// through LibTorch's own; a LibTorch/oneDNN version that got one wrong shows here with its values.
TEST(DepthwiseConv2D, EachChannelHasItsOwnKernelsInTensorFlowOrder) {
  const auto expected = at::tensor({9.0f * 1 * 1, 9.0f * 2 * 1, 9.0f * 3 * 2, 9.0f * 4 * 2});
  for (const char* format : {"channels_last", "contiguous"}) {
    auto y = depthwise_of_constants(format);
    ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 4, 1, 1})) << format;
    EXPECT_TRUE(at::equal(y.flatten(), expected)) << format << ": " << y.flatten() << " expected " << expected;
  }
}

TEST(DepthwiseConv2D, BadArguments) {
  EXPECT_THROW(DepthwiseConv2D(DepthwiseConv2DOptions(3).depth_multiplier(0)), ConfigError);
  EXPECT_THROW(DepthwiseConv2D(DepthwiseConv2DOptions(0)), ConfigError);
  EXPECT_THROW(DepthwiseConv2D(DepthwiseConv2DOptions(3).padding("causal")), ConfigError);
  Sequential m;
  EXPECT_THROW(m->add(DepthwiseConv2D(DepthwiseConv2DOptions(5).input_shape(Shape{3, 3, 1}))), ConfigError);
}

// Values against the float64 NumPy reference of TensorFlow's depthwise_conv2d: odd sizes, stride 2,
// "same" with the odd pixel after, depth_multiplier 2 (kernel mapped to Keras's (k_h, k_w, C, m)).
TEST(DepthwiseConv2D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::string padding : {"same", "valid"}) {
    for (const std::vector<int64_t>& in : {std::vector<int64_t>{7, 9, 3}, std::vector<int64_t>{8, 5, 2}}) {
      SCOPED_TRACE(padding + " input " + format_shape(in));
      DepthwiseConv2D dw(DepthwiseConv2DOptions({3, 4}).strides(2).depth_multiplier(2).padding(padding));
      auto [x, y] = torchfit::testing::random_forward(dw.ptr(), in);
      const int64_t c = in[2];
      nlohmann::json req = {{"op", "depthwise_conv2d"},
                            {"x", torchfit::testing::tensor_json(x)},
                            {"depthwise_kernel", torchfit::testing::tensor_json(
                                                     dw->depthwise_kernel.reshape({c, 2, 3, 4}).permute({2, 3, 0, 1}))},
                            {"strides", {2, 2}},
                            {"dilation_rate", {1, 1}},
                            {"padding", padding}};
      torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
    }
  }
}
