// UpSampling1D and UpSampling3D: Keras's defaults, values against the NumPy reference of Keras's nearest
// repeat (ops.repeat along each spatial axis), conformance, config, errors naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/up_sampling1d3d.h>
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

TEST(UpSampling1D3D, KerasDefaultsAndConformance) {
  EXPECT_EQ(UpSampling1D()->options.size(), 2);
  EXPECT_EQ(at::IntArrayRef(*UpSampling3D()->options.size()).vec(), (std::vector<int64_t>{2, 2, 2}));
  expect_layer_conformance(UpSampling1D().ptr(), LayerConformance({5, 3}, {10, 3}));
  expect_layer_conformance(UpSampling1D(UpSampling1DOptions(3)).ptr(), LayerConformance({4, 2}, {12, 2}));
  expect_layer_conformance(UpSampling3D().ptr(), LayerConformance({2, 3, 4, 2}, {4, 6, 8, 2}));
  expect_layer_conformance(UpSampling3D(UpSampling3DOptions({1, 3, 2})).ptr(),
                           LayerConformance({2, 3, 3, 1}, {2, 9, 6, 1}));
}

TEST(UpSampling1D, RepeatsEachStep) {
  auto x = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).reshape({1, 2, 2});  // steps (1, 2), (3, 4)
  auto y = torchfit::testing::run_layer(UpSampling1D(UpSampling1DOptions(3)).ptr(), {2, 2}, x);
  EXPECT_TRUE(at::equal(
      y, at::tensor({1.0f, 2.0f, 1.0f, 2.0f, 1.0f, 2.0f, 3.0f, 4.0f, 3.0f, 4.0f, 3.0f, 4.0f}).reshape({1, 6, 2})))
      << y;
}

TEST(UpSampling1D3D, MatchesNumPyRepeat) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto [x, y] = random_forward(UpSampling1D(UpSampling1DOptions(3)).ptr(), {5, 2});
  torchfit::testing::expect_matches_reference(
      y, keras_reference({{"op", "up_sampling_nearest"}, {"x", tensor_json(x)}, {"size", {3}}}), 0.0);
  auto [v, w] = random_forward(UpSampling3D(UpSampling3DOptions({2, 1, 3})).ptr(), {3, 2, 3, 2});
  torchfit::testing::expect_matches_reference(
      w, keras_reference({{"op", "up_sampling_nearest"}, {"x", tensor_json(v)}, {"size", {2, 1, 3}}}), 0.0);
}

TEST(UpSampling1D3D, ConfigIsKerasAndErrorsNameTheLayer) {
  EXPECT_EQ(layer_from_json({{"class_name", "UpSampling1D"}, {"config", {{"name", "u"}, {"size", 4}}}})->config(),
            (Json{{"name", "u"}, {"size", 4}}));
  EXPECT_EQ(layer_from_json({{"class_name", "UpSampling3D"}, {"config", {{"name", "u"}, {"size", 3}}}})->config(),
            (Json{{"name", "u"}, {"size", {3, 3, 3}}}));
  EXPECT_NE(torchfit::testing::layer_config_error(
                {{"class_name", "UpSampling3D"}, {"config", {{"name", "u3"}, {"size", {2, 2}}}}})
                .find("layer 'u3' (UpSampling3D): field 'size' must be an integer or a list of 3 integers"),
            std::string::npos);
  try {
    UpSampling3D(UpSampling3DOptions({2, 0, 1}).name("u3"));
    FAIL() << "a zero factor accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'u3' (UpSampling3D): size must be > 0, got (2, 0, 1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(UpSampling1D(UpSampling1DOptions(-1)), ConfigError);
  try {
    UpSampling1D(UpSampling1DOptions().name("u1"))->build({4, 4, 3});
    FAIL() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'u1' (UpSampling1D) expects a sequence (steps, channels)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(UpSampling3D()->build({4, 4, 3}), ConfigError);
}
