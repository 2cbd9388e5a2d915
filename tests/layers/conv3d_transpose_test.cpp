// Conv3DTranspose: output sizes as Keras's deconv_output_length, values against the float64 NumPy
// reference of TensorFlow's conv3d_transpose (the adjoint of conv3d, the odd "same" step cropped at the end)
// with strides 2, output_padding and dilation; conformance; Keras's kernel layout (k_d, k_h, k_w, F, C_in);
// a Keras 3 config; bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/conv3d_transpose.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/conv_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace conv3d_transpose_test {

TEST(Conv3DTranspose, Conformance) {
  // valid, stride 1: n + k − 1; k³·C_in·F + F = 27·2·2 + 2.
  expect_layer_conformance(Conv3DTranspose(Conv3DTransposeOptions(2, 3)).ptr(),
                           LayerConformance({3, 4, 3, 2}, {5, 6, 5, 2}).trainable_params(110));
  // same, stride 2: n·2; 2·3·3·1·3 + 3.
  expect_layer_conformance(
      Conv3DTranspose(Conv3DTransposeOptions(3, {2, 3, 3}).strides(2).padding("same").activation("relu")).ptr(),
      LayerConformance({3, 4, 2, 1}, {6, 8, 4, 3}).trainable_params(57));
}

TEST(Conv3DTranspose, MatchesTensorFlowConv3DTranspose) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    std::vector<int64_t> in, k, s, d;
    std::string padding;
    std::optional<std::vector<int64_t>> output_padding;
  };
  for (const Case& c : {Case{{3, 4, 5, 2}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, "same", std::nullopt},  // odd crop
                        Case{{3, 4, 3, 2}, {2, 3, 2}, {2, 1, 3}, {1, 1, 1}, "valid", std::nullopt},
                        Case{{3, 3, 4, 2}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, "same", std::vector<int64_t>{1, 0, 1}},
                        Case{{3, 4, 3, 1}, {2, 2, 2}, {1, 1, 1}, {2, 1, 2}, "valid", std::nullopt},
                        Case{{3, 2, 3, 2}, {1, 2, 1}, {3, 3, 2}, {1, 1, 1}, "valid", std::nullopt}}) {  // k < s
    SCOPED_TRACE(c.padding + " input " + format_shape(c.in) + (c.output_padding ? " with output_padding" : ""));
    auto o = Conv3DTransposeOptions(3, {c.k[0], c.k[1], c.k[2]})
                 .strides({c.s[0], c.s[1], c.s[2]})
                 .dilation_rate({c.d[0], c.d[1], c.d[2]})
                 .padding(c.padding);
    nlohmann::json args = {{"strides", c.s}, {"dilation_rate", c.d}, {"padding", c.padding}};
    if (c.output_padding) {
      const auto& p = *c.output_padding;
      o.output_padding(torch::ExpandingArray<3>({p[0], p[1], p[2]}));
      args["output_padding"] = p;
    }
    torchfit::testing::expect_conv_matches_reference(Conv3DTranspose(o).ptr(), c.in, "conv_transpose_nd", {"kernel"},
                                                     args);
  }
}

TEST(Conv3DTranspose, KerasLayoutAndKeras3Config) {
  Conv3DTranspose layer(Conv3DTransposeOptions(3, {2, 3, 1}));
  layer->build({4, 4, 4, 2});
  const at::Tensor keras = at::arange(2 * 3 * 1 * 3 * 2, at::kFloat).reshape({2, 3, 1, 3, 2});  // (k…, F, C_in)
  layer->set_keras_weights({keras, at::zeros({3})});
  EXPECT_TRUE(layer->kernel.permute({2, 3, 4, 1, 0}).equal(keras));  // kernel (C_in, F, k_d, k_h, k_w)
  EXPECT_TRUE(layer->keras_weights()[0].equal(keras));
  EXPECT_TRUE(layer->config()["output_padding"].is_null());
  const Model model = model_from_json(torchfit::testing::keras3_sequential({4, 5, 6, 2}, "Conv3DTranspose",
                                                                           {{"name", "up"},
                                                                            {"filters", 4},
                                                                            {"kernel_size", {3, 3, 3}},
                                                                            {"strides", {2, 2, 2}},
                                                                            {"padding", "same"},
                                                                            {"output_padding", nullptr},
                                                                            {"dilation_rate", {1, 1, 1}},
                                                                            {"activation", "linear"},
                                                                            {"use_bias", true}}));
  EXPECT_EQ(model->output_shape(), (Shape{8, 10, 12, 4}));
}

TEST(Conv3DTranspose, BadArgumentsNameTheLayer) {
  EXPECT_THROW(Conv3DTranspose(Conv3DTransposeOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv3DTranspose(Conv3DTransposeOptions(2, 3).strides(2).output_padding(2)), ConfigError);
  EXPECT_THROW(Conv3DTranspose(Conv3DTransposeOptions(2, 3).output_padding(-1)), ConfigError);
  EXPECT_THROW(Conv3DTranspose(Conv3DTransposeOptions(2, 3).padding("causal")), ConfigError);
  try {
    Conv3DTranspose(Conv3DTransposeOptions(2, 3))->build({4, 4, 3});
    ADD_FAILURE() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(Conv3DTranspose) expects a volume (D, H, W, C)"), std::string::npos)
        << e.what();
  }
}

}  // namespace conv3d_transpose_test
