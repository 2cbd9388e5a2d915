// ZeroPadding1D, ZeroPadding3D, Cropping1D, Cropping3D: Keras's defaults and argument forms, values against
// the NumPy reference of Keras's ops.pad / slicing, conformance, config, errors naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/padding_cropping1d3d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::keras_reference;
using torchfit::testing::LayerConformance;
using torchfit::testing::random_forward;
using torchfit::testing::tensor_json;
using Json = nlohmann::json;

namespace padding_cropping1d3d_test {

// The ConfigError message of building `layer` for `in` ("" if none).
std::string build_error(const std::shared_ptr<Layer>& layer, const Shape& in) {
  try {
    layer->build(in);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ZeroPadding1D3D, KerasDefaultsAndConformance) {
  EXPECT_EQ(ZeroPadding1D()->options.padding(), Edges1D(1, 1));
  EXPECT_EQ(ZeroPadding3D()->options.padding(), Edges3D(1));
  expect_layer_conformance(ZeroPadding1D().ptr(), LayerConformance({5, 3}, {7, 3}));
  expect_layer_conformance(ZeroPadding1D(ZeroPadding1DOptions({0, 2})).ptr(), LayerConformance({5, 3}, {7, 3}));
  expect_layer_conformance(ZeroPadding3D().ptr(), LayerConformance({2, 3, 4, 2}, {4, 5, 6, 2}));
  expect_layer_conformance(ZeroPadding3D(ZeroPadding3DOptions({1, 0, 2})).ptr(),
                           LayerConformance({2, 3, 4, 2}, {4, 3, 8, 2}));
  expect_layer_conformance(ZeroPadding3D(ZeroPadding3DOptions({0, 1, 2, 0, 1, 3})).ptr(),
                           LayerConformance({2, 3, 4, 1}, {3, 5, 8, 1}));
}

TEST(Cropping1D3D, KerasDefaultsAndConformance) {
  EXPECT_EQ(Cropping1D()->options.cropping(), Edges1D(1, 1));
  EXPECT_EQ(Cropping3D()->options.cropping(), Edges3D(1));
  expect_layer_conformance(Cropping1D().ptr(), LayerConformance({6, 3}, {4, 3}));
  expect_layer_conformance(Cropping1D(Cropping1DOptions({2, 0})).ptr(), LayerConformance({6, 3}, {4, 3}));
  expect_layer_conformance(Cropping3D().ptr(), LayerConformance({4, 5, 6, 2}, {2, 3, 4, 2}));
  expect_layer_conformance(Cropping3D(Cropping3DOptions({0, 1, 2, 0, 1, 3})).ptr(),
                           LayerConformance({4, 5, 6, 2}, {3, 3, 2, 2}));
}

TEST(ZeroPadding1D3D, MatchesNumPyPad) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = random_forward(ZeroPadding1D(ZeroPadding1DOptions({1, 3})).ptr(), {5, 2});
  torchfit::testing::expect_matches_reference(
      y, keras_reference({{"op", "zero_padding"}, {"x", tensor_json(x)}, {"padding", {{1, 3}}}}), 0.0);
  auto [v, w] = random_forward(ZeroPadding3D(ZeroPadding3DOptions({0, 1, 2, 0, 1, 3})).ptr(), {3, 2, 4, 2});
  torchfit::testing::expect_matches_reference(
      w, keras_reference({{"op", "zero_padding"}, {"x", tensor_json(v)}, {"padding", {{0, 1}, {2, 0}, {1, 3}}}}), 0.0);
}

TEST(Cropping1D3D, MatchesNumPySlices) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = random_forward(Cropping1D(Cropping1DOptions({2, 1})).ptr(), {7, 3});
  torchfit::testing::expect_matches_reference(
      y, keras_reference({{"op", "cropping"}, {"x", tensor_json(x)}, {"cropping", {{2, 1}}}}), 0.0);
  auto [v, w] = random_forward(Cropping3D(Cropping3DOptions({1, 0, 0, 2, 2, 1})).ptr(), {3, 5, 6, 2});
  torchfit::testing::expect_matches_reference(
      w, keras_reference({{"op", "cropping"}, {"x", tensor_json(v)}, {"cropping", {{1, 0}, {0, 2}, {2, 1}}}}), 0.0);
}

TEST(PaddingCropping1D3D, ConfigReadsEveryKerasFormAndWritesKerasForm) {
  for (const auto& [cls, key, form, expected] : std::vector<std::tuple<std::string, std::string, Json, Json>>{
           {"ZeroPadding1D", "padding", 2, {2, 2}},
           {"ZeroPadding1D", "padding", {1, 3}, {1, 3}},
           {"Cropping1D", "cropping", {0, 2}, {0, 2}},
           {"ZeroPadding3D", "padding", 2, {{2, 2}, {2, 2}, {2, 2}}},
           {"ZeroPadding3D", "padding", {1, 0, 3}, {{1, 1}, {0, 0}, {3, 3}}},
           {"Cropping3D", "cropping", {{0, 1}, {2, 3}, {1, 0}}, {{0, 1}, {2, 3}, {1, 0}}}}) {
    auto layer = layer_from_json({{"class_name", cls}, {"config", {{key, form}}}});
    EXPECT_EQ(layer->config()[key], expected) << cls << " " << form.dump();
  }
  EXPECT_EQ(layer_from_json({{"class_name", "Cropping3D"}, {"config", Json::object()}})->config()["cropping"],
            (Json{{1, 1}, {1, 1}, {1, 1}}));
  EXPECT_NE(torchfit::testing::layer_config_error(
                {{"class_name", "ZeroPadding1D"}, {"config", {{"name", "zp"}, {"padding", {1, 2, 3}}}}})
                .find("'zp' (ZeroPadding1D): field 'padding'"),
            std::string::npos);
  EXPECT_NE(torchfit::testing::layer_config_error(
                {{"class_name", "Cropping3D"}, {"config", {{"name", "c"}, {"cropping", {{1, 1}, {1, 1}}}}}})
                .find("'c' (Cropping3D): field 'cropping'"),
            std::string::npos);
}

TEST(PaddingCropping1D3D, BadArgumentsAndInputsNameTheLayer) {
  try {
    ZeroPadding3D(ZeroPadding3DOptions({1, -1, 0}).name("zp3"));
    FAIL() << "a negative padding accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("layer 'zp3' (ZeroPadding3D): padding must be >= 0, got ((1, 1), (-1, -1), (0, 0))"),
        std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Cropping1D(Cropping1DOptions({-1, 0})), ConfigError);
  EXPECT_NE(build_error(ZeroPadding1D(ZeroPadding1DOptions().name("zp1")).ptr(), {4, 4, 3})
                .find("layer 'zp1' (ZeroPadding1D) expects a sequence (steps, channels), got (None, 4, 4, 3)"),
            std::string::npos);
  EXPECT_NE(build_error(Cropping3D(Cropping3DOptions().name("c3")).ptr(), {4, 3})
                .find("layer 'c3' (Cropping3D) expects a volume (D, H, W, C)"),
            std::string::npos);
  EXPECT_NE(build_error(Cropping1D(Cropping1DOptions({2, 2}).name("c1")).ptr(), {4, 3})
                .find("layer 'c1' (Cropping1D): cropping (2, 2) leaves nothing of the input (None, 4, 3)"),
            std::string::npos);
  EXPECT_NE(build_error(Cropping3D(Cropping3DOptions({0, 3, 0}).name("c3")).ptr(), {4, 6, 5, 1})
                .find("cropping ((0, 0), (3, 3), (0, 0)) leaves nothing"),
            std::string::npos);
}

}  // namespace padding_cropping1d3d_test
