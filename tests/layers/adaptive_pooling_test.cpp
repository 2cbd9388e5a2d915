// AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D: conformance, values against the NumPy
// reference written from Keras 3's ops.adaptive_avg_pool / adaptive_max_pool (bins that divide evenly, that
// overlap, and an output larger than the input), config round trip, a Keras 3 config, bad input.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/adaptive_pooling.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;
using Json = nlohmann::json;

TEST(AdaptivePooling, Conformance) {
  expect_layer_conformance(AdaptiveAveragePooling1D(AdaptivePooling1DOptions(3)).ptr(),
                           LayerConformance({7, 2}, {3, 2}));
  expect_layer_conformance(AdaptiveMaxPooling1D(AdaptivePooling1DOptions(4)).ptr(), LayerConformance({8, 3}, {4, 3}));
  expect_layer_conformance(AdaptiveAveragePooling2D(AdaptivePooling2DOptions({2, 3})).ptr(),
                           LayerConformance({5, 7, 2}, {2, 3, 2}));
  expect_layer_conformance(AdaptiveMaxPooling2D(AdaptivePooling2DOptions(2)).ptr(),
                           LayerConformance({4, 6, 3}, {2, 2, 3}));
  expect_layer_conformance(AdaptiveAveragePooling3D(AdaptivePooling3DOptions({2, 1, 3})).ptr(),
                           LayerConformance({3, 4, 5, 2}, {2, 1, 3, 2}));
  expect_layer_conformance(AdaptiveMaxPooling3D(AdaptivePooling3DOptions(2)).ptr(),
                           LayerConformance({4, 5, 3, 2}, {2, 2, 2, 2}));
  EXPECT_EQ(keras_snake_case("AdaptiveAveragePooling2D"), "adaptive_average_pooling2d");
}

namespace {

template <typename Layer, typename Options>
void expect_matches_keras(const std::string& op, const Shape& in, const Options& options) {
  SCOPED_TRACE(op + " input " + format_shape(in));
  Layer layer(options);
  auto [x, y] = torchfit::testing::random_forward(layer.ptr(), in);
  const auto& out = *options.output_size();
  const Json req = {{"op", op},
                    {"x", torchfit::testing::tensor_json(x)},
                    {"output_size", std::vector<int64_t>(out.begin(), out.end())}};
  torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
}

}  // namespace

// Even bins (8 → 4), overlapping ones (7 → 3, 5 → 3), one bin (4 → 1) and an output above the input (3 → 5).
TEST(AdaptivePooling, MatchesKerasBins) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::string kind : {"avg", "max"}) {
    const std::string op = "adaptive_" + kind + "_pool";
    const bool max = kind == "max";
    for (auto [in, out] : {std::pair<Shape, int64_t>{{8, 3}, 4}, {{7, 2}, 3}, {{3, 2}, 5}}) {
      if (max) expect_matches_keras<AdaptiveMaxPooling1D>(op, in, AdaptivePooling1DOptions(out));
      if (!max) expect_matches_keras<AdaptiveAveragePooling1D>(op, in, AdaptivePooling1DOptions(out));
    }
    for (auto [in, out] :
         {std::pair<Shape, std::vector<int64_t>>{{8, 6, 2}, {4, 3}}, {{7, 5, 3}, {3, 3}}, {{4, 3, 2}, {1, 5}}}) {
      const AdaptivePooling2DOptions o({out[0], out[1]});
      if (max) expect_matches_keras<AdaptiveMaxPooling2D>(op, in, o);
      if (!max) expect_matches_keras<AdaptiveAveragePooling2D>(op, in, o);
    }
    for (auto [in, out] :
         {std::pair<Shape, std::vector<int64_t>>{{4, 6, 2, 3}, {2, 3, 1}}, {{5, 7, 3, 2}, {3, 2, 4}}}) {
      const AdaptivePooling3DOptions o({out[0], out[1], out[2]});
      if (max) expect_matches_keras<AdaptiveMaxPooling3D>(op, in, o);
      if (!max) expect_matches_keras<AdaptiveAveragePooling3D>(op, in, o);
    }
  }
}

// Keras 3.15's get_config (output_size a list of D ints; an int as older Keras 3 wrote the 1-D one) read by
// model_from_json; torchfit's own config round-trips.
TEST(AdaptivePooling, Keras3ConfigAndRoundTrip) {
  auto layer = [](const std::string& cls, Json config) {
    config["dtype"] = "float32";
    config["trainable"] = true;
    config["data_format"] = "channels_last";
    return Json{{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
  };
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, 9, 7, 4}}, {"dtype", "float32"}, {"name", "in"}}}});
  layers.push_back(layer("AdaptiveMaxPooling2D", {{"name", "amp"}, {"output_size", {3, 2}}}));
  layers.push_back(layer("Reshape", {{"name", "seq"}, {"target_shape", {6, 4}}}));
  layers.push_back(layer("AdaptiveAveragePooling1D", {{"name", "aap"}, {"output_size", 4}}));
  const Json keras = {
      {"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", layers}}}};
  const Model m = model_from_json(keras);
  EXPECT_EQ(m->get_layer("amp")->output_shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(m->get_layer("aap")->output_shape(), (Shape{4, 4}));
  const Json written = layer_to_json(*m->get_layer("aap"));
  EXPECT_EQ(written["config"]["output_size"], Json::array({4}));
  EXPECT_EQ(layer_to_json(*layer_from_json(written)), written);
  const Json volume = layer_to_json(AdaptiveMaxPooling3D(AdaptivePooling3DOptions({1, 2, 3}).name("v")).operator*());
  EXPECT_EQ(volume["config"]["output_size"], Json::array({1, 2, 3}));
  EXPECT_EQ(layer_to_json(*layer_from_json(volume)), volume);

  Json channels_first = keras;
  channels_first["config"]["layers"][1]["config"]["data_format"] = "channels_first";
  try {
    model_from_json(channels_first);
    ADD_FAILURE() << "channels_first accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("('amp', AdaptiveMaxPooling2D): data_format"), std::string::npos) << e.what();
  }
}

TEST(AdaptivePooling, BadInputNamesTheLayer) {
  using torchfit::testing::layer_config_error;
  auto spec = [](const std::string& cls, Json output_size) {
    return Json{{"class_name", cls}, {"config", {{"name", "p"}, {"output_size", output_size}}}};
  };
  EXPECT_NE(layer_config_error(spec("AdaptiveAveragePooling2D", {2, 0}))
                .find("layer 'p' (AdaptiveAveragePooling2D): output_size must be >= 1"),
            std::string::npos);
  EXPECT_NE(
      layer_config_error(spec("AdaptiveMaxPooling3D", {2, 2}))
          .find("layer 'p' (AdaptiveMaxPooling3D): field 'output_size' must be an integer or a list of 3 integers"),
      std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "AdaptiveMaxPooling1D"}, {"config", {{"name", "p"}}}})
                .find("layer 'p' (AdaptiveMaxPooling1D): missing field 'output_size'"),
            std::string::npos);
  EXPECT_THROW(AdaptiveMaxPooling1D(AdaptivePooling1DOptions(-1)), ConfigError);
  try {
    AdaptiveAveragePooling3D(AdaptivePooling3DOptions(2).name("vol"))->build({4, 4, 3});
    ADD_FAILURE() << "a 3-D input accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'vol' (AdaptiveAveragePooling3D) expects a 4-D input (D, H, W, C)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(AdaptiveMaxPooling2D(AdaptivePooling2DOptions(2))->build({6, 3}), ConfigError);
}
