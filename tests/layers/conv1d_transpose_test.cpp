// Conv1DTranspose: output lengths as Keras's deconv_output_length, values against the float64 NumPy
// reference of TensorFlow's conv1d_transpose (the adjoint of conv1d, the odd "same" step cropped at the end)
// with strides 2, output_padding and dilation; conformance; Keras's kernel layout (k, F, C_in); a Keras 3
// config; bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/conv1d_transpose.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/conv_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace conv1d_transpose_test {

TEST(Conv1DTranspose, Conformance) {
  // valid, stride 1: steps + k − 1; k·C_in·F + F = 3·2·4 + 4.
  expect_layer_conformance(Conv1DTranspose(Conv1DTransposeOptions(4, 3)).ptr(),
                           LayerConformance({6, 2}, {8, 4}).trainable_params(28));
  // same, stride 2: steps·2.
  expect_layer_conformance(
      Conv1DTranspose(Conv1DTransposeOptions(3, 3).strides(2).padding("same").activation("tanh")).ptr(),
      LayerConformance({5, 2}, {10, 3}).trainable_params(21));
  // output_padding 1, valid: (steps − 1)·2 + 3 + 1.
  expect_layer_conformance(
      Conv1DTranspose(Conv1DTransposeOptions(2, 3).strides(2).output_padding(1).use_bias(false)).ptr(),
      LayerConformance({5, 1}, {12, 2}).trainable_params(6));
}

TEST(Conv1DTranspose, MatchesTensorFlowConv1DTranspose) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    int64_t steps, k, s, d;
    std::string padding;
    std::optional<int64_t> output_padding;
  };
  for (const Case& c : {Case{5, 3, 2, 1, "same", std::nullopt},  // odd total: the extra step cut at the end
                        Case{6, 4, 2, 1, "same", std::nullopt}, Case{5, 3, 2, 1, "valid", std::nullopt},
                        Case{5, 3, 2, 1, "same", 1}, Case{5, 5, 3, 1, "same", 2}, Case{5, 3, 2, 1, "valid", 1},
                        Case{5, 1, 3, 1, "valid", std::nullopt},  // k < s: zero steps (+ bias) at the end
                        Case{6, 3, 1, 2, "same", std::nullopt}}) {
    SCOPED_TRACE(c.padding + " steps " + std::to_string(c.steps) + " k" + std::to_string(c.k) + " s" +
                 std::to_string(c.s) + " d" + std::to_string(c.d));
    auto o = Conv1DTransposeOptions(3, c.k).strides(c.s).dilation_rate(c.d).padding(c.padding);
    nlohmann::json args = {{"strides", {c.s}}, {"dilation_rate", {c.d}}, {"padding", c.padding}};
    if (c.output_padding) {
      o.output_padding(torch::ExpandingArray<1>(*c.output_padding));
      args["output_padding"] = {*c.output_padding};
    }
    torchfit::testing::expect_conv_matches_reference(Conv1DTranspose(o).ptr(), {c.steps, 2}, "conv_transpose_nd",
                                                     {"kernel"}, args);
  }
}

TEST(Conv1DTranspose, KerasLayoutAndKeras3Config) {
  Conv1DTranspose layer(Conv1DTransposeOptions(3, 2));
  layer->build({5, 4});
  const at::Tensor keras = at::arange(2 * 3 * 4, at::kFloat).reshape({2, 3, 4});  // (k, F, C_in)
  layer->set_keras_weights({keras, at::zeros({3})});
  EXPECT_TRUE(layer->kernel.permute({2, 1, 0}).equal(keras));  // kernel (C_in, F, k)
  EXPECT_TRUE(layer->keras_weights()[0].equal(keras));
  EXPECT_EQ(layer->config()["kernel_size"], nlohmann::json::array({2}));
  const Model model = model_from_json(torchfit::testing::keras3_sequential({7, 3}, "Conv1DTranspose",
                                                                           {{"name", "up"},
                                                                            {"filters", 4},
                                                                            {"kernel_size", {3}},
                                                                            {"strides", {2}},
                                                                            {"padding", "same"},
                                                                            {"output_padding", nullptr},
                                                                            {"dilation_rate", {1}},
                                                                            {"activation", "relu"},
                                                                            {"use_bias", true}}));
  EXPECT_EQ(model->output_shape(), (Shape{14, 4}));
}

TEST(Conv1DTranspose, BadArgumentsNameTheLayer) {
  EXPECT_THROW(Conv1DTranspose(Conv1DTransposeOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv1DTranspose(Conv1DTransposeOptions(2, 3).strides(2).output_padding(2)), ConfigError);
  EXPECT_THROW(Conv1DTranspose(Conv1DTransposeOptions(2, 3).padding("causal")), ConfigError);  // Keras 3: valid/same
  EXPECT_THROW(Conv1DTranspose(Conv1DTransposeOptions(2, 3).dilation_rate(0)), ConfigError);
  try {
    Conv1DTranspose(Conv1DTransposeOptions(2, 3))->build({4, 4, 3});
    ADD_FAILURE() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(Conv1DTranspose) expects a sequence (steps, channels)"), std::string::npos)
        << e.what();
  }
}

}  // namespace conv1d_transpose_test
