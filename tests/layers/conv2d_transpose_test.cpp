// Conv2DTranspose: output sizes as Keras's deconv_output_length ("same"/"valid", output_padding), values
// against the float64 NumPy reference of TensorFlow's conv2d_transpose (the adjoint of conv2d, the odd
// "same" row cropped at the end), conformance, parameter counts, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/conv2d_transpose.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(Conv2DTranspose, ConformanceShapesAndParameterCounts) {
  // k·k·C_in·filters + filters: 3·3·2·4 + 4 = 76; valid stride 1: H + k − 1.
  expect_layer_conformance(Conv2DTranspose(Conv2DTransposeOptions(4, 3)).ptr(),
                           LayerConformance({5, 5, 2}, {7, 7, 4}).trainable_params(76));
  // same stride 2: H·s.
  expect_layer_conformance(Conv2DTranspose(Conv2DTransposeOptions(2, 3).strides(2).padding("same")).ptr(),
                           LayerConformance({5, 7, 3}, {10, 14, 2}).trainable_params(56));
  // output_padding: (H − 1)·s + k − 2·(k // 2) + p = 4·2 + 3 − 2 + 1 = 10 (same), 4·2 + 3 + 1 = 12 (valid).
  expect_layer_conformance(
      Conv2DTranspose(Conv2DTransposeOptions(2, 3).strides(2).padding("same").output_padding(1).activation("relu"))
          .ptr(),
      LayerConformance({5, 5, 1}, {10, 10, 2}).trainable_params(20));
  expect_layer_conformance(
      Conv2DTranspose(Conv2DTransposeOptions(2, 3).strides(2).output_padding(1).use_bias(false)).ptr(),
      LayerConformance({5, 5, 1}, {12, 12, 2}).trainable_params(18));
  // valid with k < s: H·s (zero rows after the full result, plus the bias).
  expect_layer_conformance(Conv2DTranspose(Conv2DTransposeOptions(3, 1).strides(2)).ptr(),
                           LayerConformance({5, 4, 2}, {10, 8, 3}).trainable_params(9));
}

TEST(Conv2DTranspose, MatchesTensorFlowConv2DTranspose) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    std::vector<int64_t> in, kernel, strides, dilation;
    std::string padding;
    std::optional<std::vector<int64_t>> output_padding;
  };
  const std::vector<Case> cases = {
      {{5, 7, 2}, {3, 3}, {2, 2}, {1, 1}, "same", std::nullopt},  // odd total: the extra row cut at the end
      {{5, 6, 2}, {4, 4}, {2, 2}, {1, 1}, "same", std::nullopt},  // even total: one row cut each side
      {{4, 5, 3}, {3, 2}, {2, 3}, {1, 1}, "same", std::nullopt},
      {{5, 5, 2}, {3, 3}, {2, 2}, {1, 1}, "same", std::vector<int64_t>{1, 0}},
      {{5, 5, 2}, {5, 5}, {3, 3}, {1, 1}, "same", std::vector<int64_t>{2, 1}},
      {{5, 7, 2}, {3, 3}, {2, 2}, {1, 1}, "valid", std::nullopt},
      {{5, 7, 2}, {3, 3}, {2, 2}, {1, 1}, "valid", std::vector<int64_t>{1, 1}},
      {{5, 4, 2}, {1, 2}, {3, 3}, {1, 1}, "valid", std::nullopt},  // k < s: zero rows (+ bias) at the end
      {{6, 5, 2}, {3, 3}, {1, 1}, {2, 2}, "same", std::nullopt},   // dilation
      {{6, 5, 2}, {3, 3}, {1, 1}, {2, 1}, "valid", std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.padding + " input " + format_shape(c.in) + " kernel " + std::to_string(c.kernel[0]) + "x" +
                 std::to_string(c.kernel[1]) + (c.output_padding ? " with output_padding" : ""));
    auto o = Conv2DTransposeOptions(3, {c.kernel[0], c.kernel[1]})
                 .strides({c.strides[0], c.strides[1]})
                 .dilation_rate({c.dilation[0], c.dilation[1]})
                 .padding(c.padding);
    if (c.output_padding) o.output_padding(torch::ExpandingArray<2>({(*c.output_padding)[0], (*c.output_padding)[1]}));
    Conv2DTranspose layer(o);
    auto [x, y0] = torchfit::testing::random_forward(layer.ptr(), c.in);
    {
      at::NoGradGuard g;
      layer->bias.uniform_(-1, 1);
    }
    const at::Tensor y = layer->forward(x).detach();
    nlohmann::json req = {{"op", "conv2d_transpose"},
                          {"x", torchfit::testing::tensor_json(x)},
                          {"kernel", torchfit::testing::tensor_json(layer->kernel.permute({2, 3, 1, 0}))},
                          {"bias", torchfit::testing::tensor_json(layer->bias)},
                          {"strides", c.strides},
                          {"dilation_rate", c.dilation},
                          {"padding", c.padding}};
    if (c.output_padding) req["output_padding"] = *c.output_padding;
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
  }
}

TEST(Conv2DTranspose, ConfigUsesKerasKeys) {
  auto layer = Conv2DTranspose(Conv2DTransposeOptions(8, {3, 2}).strides(2).padding("same").output_padding(1));
  const auto c = layer->config();
  EXPECT_EQ(c["filters"], 8);
  EXPECT_EQ(c["kernel_size"], nlohmann::json({3, 2}));
  EXPECT_EQ(c["output_padding"], nlohmann::json({1, 1}));
  EXPECT_TRUE(Conv2DTranspose(Conv2DTransposeOptions(8, 3))->config()["output_padding"].is_null());
  auto rebuilt = layer_from_json({{"class_name", "Conv2DTranspose"},
                                  {"config", {{"filters", 2}, {"kernel_size", 3}, {"output_padding", nullptr}}}});
  EXPECT_EQ(rebuilt->config()["kernel_size"], nlohmann::json({3, 3}));
}

TEST(Conv2DTranspose, BadArguments) {
  EXPECT_THROW(Conv2DTranspose(Conv2DTransposeOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv2DTranspose(Conv2DTransposeOptions(2, 3).strides(2).output_padding(2)), ConfigError);
  EXPECT_THROW(Conv2DTranspose(Conv2DTransposeOptions(2, 3).output_padding(-1)), ConfigError);
  Sequential m;
  EXPECT_THROW(m->add(Conv2DTranspose(Conv2DTransposeOptions(2, 3).input_shape(Shape{4, 4}))), ConfigError);
}
