// The user layers' conformance tests: one call per layer configuration.
#include <gtest/gtest.h>

#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/registry.h>
#include <torchfit/saving/onnx.h>
#include <torchfit/testing/layer_conformance.h>

#include "residual_block.h"
#include "swish.h"

using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(Swish, Conformance) {
  expect_layer_conformance(Swish().ptr(), LayerConformance({8, 8, 3}, {8, 8, 3}).trainable_params(1));
  expect_layer_conformance(Swish(SwishOptions().trainable(false)).ptr(),
                           LayerConformance({5}, {5}).non_trainable_params(1));
}

TEST(Swish, KnownValue) {
  Swish s;
  s->build({1});
  // 2 · sigmoid(2) = 1.7615942
  EXPECT_NEAR(s->forward(at::full({1, 1}, 2.0f)).item<double>(), 1.7615942, 1e-6);
}

TEST(Swish, RebuiltFromItsConfigUnknownFieldsRefused) {
  // The registration line reads the arguments SwishOptions::args() lists.
  auto layer = torchfit::layer_from_json({{"class_name", "Swish"}, {"config", {{"name", "s"}, {"beta", 0.5}}}});
  EXPECT_EQ(layer->config().dump(), R"({"beta":0.5,"name":"s","trainable":true})");
  try {
    torchfit::layer_from_json({{"class_name", "Swish"}, {"config", {{"name", "s"}, {"betta", 0.5}}}});
    FAIL() << "a typo'd field was accepted";
  } catch (const torchfit::ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer 's' (Swish): unknown field 'betta' (known: beta, input_shape, name, trainable)"),
              std::string::npos)
        << msg;
  }
}

TEST(ResidualBlock, Conformance) {
  // 2 · (3·3·4·4 + 4) = 296 parameters.
  expect_layer_conformance(ResidualBlock().ptr(), LayerConformance({6, 6, 4}, {6, 6, 4}).trainable_params(296));
}

TEST(CustomLayers, ExportToOnnxThroughTheirHooks) {
  // The values are checked by torchfit's tests/scripts/onnx_export_test.sh (model "user_layers").
  torchfit::KerasTensor x = torchfit::Input({6, 6, 3});
  torchfit::Model model({x}, {Swish()->call(ResidualBlock()->call(x))}, "custom");
  const std::string bytes = torchfit::saving::onnx_model_bytes(model);
  EXPECT_NE(bytes.find("Sigmoid"), std::string::npos);
  EXPECT_NE(bytes.find("residual_block/Add"), std::string::npos);
}
