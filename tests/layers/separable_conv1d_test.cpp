// SeparableConv1D: values against the float64 NumPy reference of TensorFlow's separable convolution over a
// (1, steps) image (depthwise with the strides/padding/dilation, then width 1) at odd lengths, stride 2,
// valid and TensorFlow's asymmetric same; conformance; Keras's layouts depthwise_kernel (k, C, m) and
// pointwise_kernel (1, C·m, F); a Keras 3 config; bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/separable_conv1d.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/conv_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace separable_conv1d_test {

TEST(SeparableConv1D, Conformance) {
  // k·C·m + C·m·F + F = 3·3 + 3·4 + 4.
  expect_layer_conformance(SeparableConv1D(SeparableConv1DOptions(4, 3)).ptr(),
                           LayerConformance({7, 3}, {5, 4}).trainable_params(25));
  // m = 2, same, stride 2, no bias: 3·2·2 + 4·5.
  expect_layer_conformance(
      SeparableConv1D(
          SeparableConv1DOptions(5, 3).depth_multiplier(2).strides(2).padding("same").use_bias(false).activation(
              "relu"))
          .ptr(),
      LayerConformance({8, 2}, {4, 5}).trainable_params(32));
}

TEST(SeparableConv1D, MatchesTensorFlowSeparableConv) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    int64_t steps, k, s, d, m;
    std::string padding;
  };
  for (const Case& c : {Case{8, 3, 2, 1, 1, "same"},  // odd total: the extra step after
                        Case{8, 3, 2, 1, 2, "same"}, Case{9, 3, 2, 1, 1, "valid"}, Case{9, 4, 2, 1, 2, "valid"},
                        Case{9, 3, 1, 2, 2, "same"}}) {
    SCOPED_TRACE(c.padding + " steps " + std::to_string(c.steps) + " m" + std::to_string(c.m));
    SeparableConv1D layer(
        SeparableConv1DOptions(4, c.k).strides(c.s).dilation_rate(c.d).depth_multiplier(c.m).padding(c.padding));
    torchfit::testing::expect_conv_matches_reference(
        layer.ptr(), {c.steps, 3}, "separable_conv_nd", {"depthwise_kernel", "pointwise_kernel"},
        {{"strides", {c.s}}, {"dilation_rate", {c.d}}, {"padding", c.padding}});
  }
}

TEST(SeparableConv1D, KerasLayoutAndKeras3Config) {
  SeparableConv1D layer(SeparableConv1DOptions(5, 2).depth_multiplier(2));
  layer->build({6, 3});
  std::vector<std::string> names;
  for (const auto& p : layer->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"depthwise_kernel", "pointwise_kernel", "bias"}));
  const at::Tensor depthwise = at::arange(2 * 3 * 2, at::kFloat).reshape({2, 3, 2});  // (k, C, m)
  const at::Tensor pointwise = at::arange(6 * 5, at::kFloat).reshape({1, 6, 5});      // (1, C·m, F)
  layer->set_keras_weights({depthwise, pointwise, at::zeros({5})});
  EXPECT_TRUE(layer->depthwise_kernel.reshape({3, 2, 2}).permute({2, 0, 1}).equal(depthwise));  // (C·m, 1, k)
  EXPECT_TRUE(layer->pointwise_kernel.permute({2, 1, 0}).equal(pointwise));                     // (F, C·m, 1)
  const auto back = layer->keras_weights();
  EXPECT_TRUE(back[0].equal(depthwise) && back[1].equal(pointwise));
  const Model model = model_from_json(torchfit::testing::keras3_sequential({11, 4}, "SeparableConv1D",
                                                                           {{"name", "sep"},
                                                                            {"filters", 6},
                                                                            {"kernel_size", {3}},
                                                                            {"strides", {2}},
                                                                            {"padding", "same"},
                                                                            {"depth_multiplier", 1},
                                                                            {"dilation_rate", {1}},
                                                                            {"activation", "relu"},
                                                                            {"use_bias", true}}));
  EXPECT_EQ(model->output_shape(), (Shape{6, 6}));
}

TEST(SeparableConv1D, BadArgumentsNameTheLayer) {
  EXPECT_THROW(SeparableConv1D(SeparableConv1DOptions(0, 3)), ConfigError);
  EXPECT_THROW(SeparableConv1D(SeparableConv1DOptions(2, 3).depth_multiplier(0)), ConfigError);
  EXPECT_THROW(SeparableConv1D(SeparableConv1DOptions(2, 3).padding("causal")), ConfigError);  // Keras 3: valid/same
  try {
    SeparableConv1D(SeparableConv1DOptions(2, 3))->build({4, 4, 3});
    ADD_FAILURE() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(SeparableConv1D) expects a sequence (steps, channels)"), std::string::npos)
        << e.what();
  }
}

}  // namespace separable_conv1d_test
