// SeparableConv2D: parameter counts as Keras, values against the float64 NumPy reference of
// TensorFlow's separable_conv2d (depthwise with the strides/padding, then 1×1), conformance, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/separable_conv2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(SeparableConv2D, ConformanceAndParameterCounts) {
  // k·k·C·m + C·m·filters + filters = 9·3·1 + 3·8 + 8 = 59 (Keras's summary for SeparableConv2D(8, 3) on C = 3).
  expect_layer_conformance(SeparableConv2D(SeparableConv2DOptions(8, 3)).ptr(),
                           LayerConformance({7, 7, 3}, {5, 5, 8}).trainable_params(59));
  // m = 2, same, stride 2, no bias: 3·2·2·2 + 4·5 = 44.
  expect_layer_conformance(
      SeparableConv2D(SeparableConv2DOptions(5, {3, 2}).depth_multiplier(2).strides(2).padding("same").use_bias(false))
          .ptr(),
      LayerConformance({7, 8, 2}, {4, 4, 5}).trainable_params(44));
}

TEST(SeparableConv2D, MatchesTensorFlowSeparableConv2D) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::string padding : {"same", "valid"}) {
    for (const int64_t m : {1, 2}) {
      SCOPED_TRACE(padding + " depth_multiplier " + std::to_string(m));
      SeparableConv2D layer(SeparableConv2DOptions(4, 3).strides(2).depth_multiplier(m).padding(padding));
      auto [x, y0] = torchfit::testing::random_forward(layer.ptr(), {8, 9, 3});  // 8: odd "same" total
      {
        at::NoGradGuard g;
        layer->bias.uniform_(-1, 1);
      }
      const at::Tensor y = layer->forward(x).detach();
      nlohmann::json req = {
          {"op", "separable_conv2d"},
          {"x", torchfit::testing::tensor_json(x)},
          {"depthwise_kernel",
           torchfit::testing::tensor_json(layer->depthwise_kernel.reshape({3, m, 3, 3}).permute({2, 3, 0, 1}))},
          {"pointwise_kernel", torchfit::testing::tensor_json(layer->pointwise_kernel.permute({2, 3, 1, 0}))},
          {"bias", torchfit::testing::tensor_json(layer->bias)},
          {"strides", {2, 2}},
          {"dilation_rate", {1, 1}},
          {"padding", padding}};
      torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
    }
  }
}

TEST(SeparableConv2D, ParametersInKerasOrderAndErrors) {
  SeparableConv2D layer(SeparableConv2DOptions(4, 3).input_shape(Shape{5, 5, 2}));
  Sequential m;
  m->add(layer);
  std::vector<std::string> names;
  for (const auto& p : layer->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"depthwise_kernel", "pointwise_kernel", "bias"}));
  EXPECT_EQ(layer->pointwise_kernel.sizes().vec(), (std::vector<int64_t>{4, 2, 1, 1}));
  EXPECT_THROW(SeparableConv2D(SeparableConv2DOptions(0, 3)), ConfigError);
  EXPECT_THROW(SeparableConv2D(SeparableConv2DOptions(2, 3).depth_multiplier(0)), ConfigError);
}
