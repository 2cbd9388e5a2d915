// ZeroPadding2D: Keras's padding forms, shapes, values against the NumPy reference, config keys, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/zero_padding2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

TEST(ZeroPadding2D, ConformanceForEachKerasForm) {
  expect_layer_conformance(ZeroPadding2D().ptr(), LayerConformance({5, 4, 2}, {7, 6, 2}));
  expect_layer_conformance(ZeroPadding2D(ZeroPadding2DOptions({2, 1})).ptr(), LayerConformance({5, 4, 2}, {9, 6, 2}));
  // MobileNetV2's ((0, 1), (0, 1)) before a stride-2 "valid" convolution.
  expect_layer_conformance(ZeroPadding2D(ZeroPadding2DOptions({0, 1, 0, 1})).ptr(),
                           LayerConformance({5, 4, 3}, {6, 5, 3}));
}

TEST(ZeroPadding2D, MatchesNumPyPad) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = torchfit::testing::random_forward(ZeroPadding2D(ZeroPadding2DOptions({1, 2, 0, 3})).ptr(), {3, 4, 2});
  torchfit::testing::expect_matches_reference(
      y,
      torchfit::testing::keras_reference(
          {{"op", "zero_padding2d"}, {"x", torchfit::testing::tensor_json(x)}, {"padding", {{1, 2}, {0, 3}}}}),
      0.0);
}

TEST(ZeroPadding2D, ConfigReadsEveryKerasFormAndWritesPairs) {
  for (const auto& [form, expected] : std::vector<std::pair<nlohmann::json, nlohmann::json>>{
           {2, {{2, 2}, {2, 2}}}, {{1, 3}, {{1, 1}, {3, 3}}}, {{{0, 1}, {2, 3}}, {{0, 1}, {2, 3}}}}) {
    auto layer = layer_from_json({{"class_name", "ZeroPadding2D"}, {"config", {{"padding", form}}}});
    EXPECT_EQ(layer->config()["padding"], expected) << form.dump();
  }
  EXPECT_NE(torchfit::testing::layer_config_error(
                {{"class_name", "ZeroPadding2D"}, {"config", {{"name", "zp"}, {"padding", {1, 2, 3}}}}})
                .find("'zp' (ZeroPadding2D): field 'padding'"),
            std::string::npos);
  EXPECT_THROW(ZeroPadding2D(ZeroPadding2DOptions(-1)), ConfigError);
  Sequential m;
  EXPECT_THROW(m->add(ZeroPadding2D(ZeroPadding2DOptions().input_shape(Shape{4}))), ConfigError);
}
