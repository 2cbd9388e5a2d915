// DepthwiseConv1D: values against the float64 NumPy reference of TensorFlow's depthwise convolution over a
// (1, steps) image (output channel c·m + j) at odd lengths, stride 2, dilation, valid and TensorFlow's
// asymmetric same; conformance; Keras's depthwise_kernel layout (k, C, m); a Keras 3 config; bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/depthwise_conv1d.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/conv_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace depthwise_conv1d_test {

TEST(DepthwiseConv1D, Conformance) {
  // k·C·m + C·m = 3·2 + 2.
  expect_layer_conformance(DepthwiseConv1D(DepthwiseConv1DOptions(3)).ptr(),
                           LayerConformance({7, 2}, {5, 2}).trainable_params(8));
  // m = 2, same, stride 2, no bias: 3·3·2.
  expect_layer_conformance(
      DepthwiseConv1D(DepthwiseConv1DOptions(3).depth_multiplier(2).strides(2).padding("same").use_bias(false)).ptr(),
      LayerConformance({7, 3}, {4, 6}).trainable_params(18));
}

TEST(DepthwiseConv1D, MatchesTensorFlowDepthwiseConv) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    int64_t steps, k, s, d, m;
    std::string padding;
  };
  for (const Case& c : {Case{8, 3, 2, 1, 1, "same"},  // odd total: the extra step after
                        Case{9, 4, 2, 1, 2, "same"}, Case{9, 3, 2, 1, 2, "valid"}, Case{9, 3, 1, 2, 1, "valid"},
                        Case{7, 3, 1, 2, 3, "same"}}) {
    SCOPED_TRACE(c.padding + " steps " + std::to_string(c.steps) + " m" + std::to_string(c.m));
    DepthwiseConv1D layer(
        DepthwiseConv1DOptions(c.k).strides(c.s).dilation_rate(c.d).depth_multiplier(c.m).padding(c.padding));
    torchfit::testing::expect_conv_matches_reference(
        layer.ptr(), {c.steps, 3}, "depthwise_conv_nd", {"depthwise_kernel"},
        {{"strides", {c.s}}, {"dilation_rate", {c.d}}, {"padding", c.padding}});
  }
}

TEST(DepthwiseConv1D, KerasLayoutAndKeras3Config) {
  DepthwiseConv1D layer(DepthwiseConv1DOptions(2).depth_multiplier(3));
  layer->build({5, 4});
  const at::Tensor keras = at::arange(2 * 4 * 3, at::kFloat).reshape({2, 4, 3});  // (k, C, m)
  layer->set_keras_weights({keras, at::zeros({12})});
  // depthwise_kernel (C·m, 1, k): output channel c·m + j.
  EXPECT_TRUE(layer->depthwise_kernel.reshape({4, 3, 2}).permute({2, 0, 1}).equal(keras));
  EXPECT_TRUE(layer->keras_weights()[0].equal(keras));
  const Model model = model_from_json(torchfit::testing::keras3_sequential(
      {10, 3}, "DepthwiseConv1D",
      {{"name", "dw"},
       {"kernel_size", {3}},
       {"strides", {1}},
       {"padding", "valid"},
       {"depth_multiplier", 2},
       {"dilation_rate", {1}},
       {"activation", "relu"},
       {"use_bias", true},
       {"depthwise_initializer",
        {{"module", "keras.initializers"}, {"class_name", "GlorotUniform"}, {"config", {{"seed", nullptr}}}}}}));
  EXPECT_EQ(model->output_shape(), (Shape{8, 6}));
}

TEST(DepthwiseConv1D, BadArgumentsNameTheLayer) {
  EXPECT_THROW(DepthwiseConv1D(DepthwiseConv1DOptions(3).depth_multiplier(0)), ConfigError);
  EXPECT_THROW(DepthwiseConv1D(DepthwiseConv1DOptions(3).padding("causal")), ConfigError);  // Keras 3: valid/same
  EXPECT_THROW(DepthwiseConv1D(DepthwiseConv1DOptions(0)), ConfigError);
  try {
    DepthwiseConv1D(DepthwiseConv1DOptions(5))->build({3, 2});
    ADD_FAILURE() << "a window longer than the sequence accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(DepthwiseConv1D): the window of 5 steps is longer than the input"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace depthwise_conv1d_test
