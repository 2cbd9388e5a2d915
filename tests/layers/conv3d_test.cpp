// Conv3D: values against the float64 NumPy reference of TensorFlow's conv3d (tests/layers/reference/
// keras_layers_reference.py) at odd sizes, strides 2 and dilation, valid and TensorFlow's asymmetric same;
// conformance; Keras's kernel layout (k_d, k_h, k_w, C_in, F); a Keras 3 config; bad arguments.
#include <gtest/gtest.h>

#include <torchfit/layers/conv3d.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/conv_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace conv3d_test {

TEST(Conv3D, Conformance) {
  // k³·C_in·F + F = 27·2·4 + 4; valid: n − k + 1 per axis.
  expect_layer_conformance(Conv3D(Conv3DOptions(4, 3)).ptr(),
                           LayerConformance({5, 6, 7, 2}, {3, 4, 5, 4}).trainable_params(220));
  // same, stride 2: ceil(n / 2); 2·3·1·2·3 + 3.
  expect_layer_conformance(Conv3D(Conv3DOptions(3, {2, 3, 1}).strides(2).padding("same").activation("relu")).ptr(),
                           LayerConformance({5, 6, 7, 2}, {3, 3, 4, 3}).trainable_params(39));
}

TEST(Conv3D, MatchesTensorFlowAtOddSizesStridesAndDilation) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    std::vector<int64_t> in, k, s, d;
    std::string padding;
  };
  for (const Case& c : {Case{{5, 6, 7, 2}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, "same"},  // odd totals: pad after
                        Case{{5, 6, 7, 2}, {2, 3, 2}, {1, 2, 3}, {1, 1, 1}, "valid"},
                        Case{{6, 5, 7, 2}, {3, 3, 3}, {1, 1, 1}, {2, 1, 2}, "same"},
                        Case{{7, 5, 6, 1}, {3, 2, 2}, {2, 1, 1}, {1, 2, 1}, "valid"}}) {
    SCOPED_TRACE(c.padding + " input " + format_shape(c.in));
    Conv3D layer(Conv3DOptions(3, {c.k[0], c.k[1], c.k[2]})
                     .strides({c.s[0], c.s[1], c.s[2]})
                     .dilation_rate({c.d[0], c.d[1], c.d[2]})
                     .padding(c.padding));
    torchfit::testing::expect_conv_matches_reference(
        layer.ptr(), c.in, "conv_nd", {"kernel"}, {{"strides", c.s}, {"dilation_rate", c.d}, {"padding", c.padding}});
  }
}

TEST(Conv3D, KerasLayoutAndKeras3Config) {
  Conv3D layer(Conv3DOptions(3, {2, 3, 1}));
  layer->build({4, 4, 4, 2});
  const at::Tensor keras = at::arange(2 * 3 * 1 * 2 * 3, at::kFloat).reshape({2, 3, 1, 2, 3});  // (k_d, k_h, k_w, C, F)
  layer->set_keras_weights({keras, at::zeros({3})});
  EXPECT_TRUE(layer->kernel.permute({2, 3, 4, 1, 0}).equal(keras));  // kernel (F, C, k_d, k_h, k_w)
  EXPECT_TRUE(layer->keras_weights()[0].equal(keras));
  EXPECT_EQ(layer->config()["kernel_size"], nlohmann::json({2, 3, 1}));
  const Model model = model_from_json(torchfit::testing::keras3_sequential({8, 9, 10, 3}, "Conv3D",
                                                                           {{"name", "c"},
                                                                            {"filters", 6},
                                                                            {"kernel_size", {3, 3, 3}},
                                                                            {"strides", {2, 2, 2}},
                                                                            {"padding", "same"},
                                                                            {"dilation_rate", {1, 1, 1}},
                                                                            {"groups", 1},
                                                                            {"activation", "relu"},
                                                                            {"use_bias", true}}));
  EXPECT_EQ(model->output_shape(), (Shape{4, 5, 5, 6}));
}

TEST(Conv3D, BadArgumentsNameTheLayer) {
  EXPECT_THROW(Conv3D(Conv3DOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv3D(Conv3DOptions(2, 3).padding("causal")), ConfigError);  // causal is Conv1D's only
  EXPECT_THROW(Conv3D(Conv3DOptions(2, {3, 0, 3})), ConfigError);
  EXPECT_THROW(layer_from_json({{"class_name", "Conv3D"}, {"config", {{"filters", 2}, {"kernel_size", {3, 3}}}}}),
               ConfigError);
  for (const auto& [shape, message] :
       std::vector<std::pair<Shape, std::string>>{{{4, 4, 3}, "(Conv3D) expects a volume (D, H, W, C)"},
                                                  {{3, 6, 6, 2}, "(Conv3D): kernel 5x5x5 is larger than its input"}}) {
    try {
      Conv3D(Conv3DOptions(2, 5))->build(shape);
      ADD_FAILURE() << format_shape(shape) << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

}  // namespace conv3d_test
