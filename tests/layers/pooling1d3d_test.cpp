// MaxPooling1D, AveragePooling1D, MaxPooling3D, AveragePooling3D: conformance, values against the float64
// NumPy reference of TensorFlow's max_pool / avg_pool (odd sizes, stride 2, "same" with the odd step after,
// padded values neither a maximum nor in a mean, and "valid"), Keras's defaults and config, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/pooling1d3d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;
using torchfit::testing::PoolingCase;

namespace {

const std::vector<PoolingCase>& sequence_cases() {
  static const std::vector<PoolingCase> cases{{{9, 3}, {3}, {2}, "same"},  {{9, 3}, {2}, {2}, "same"},
                                              {{10, 2}, {4}, {3}, "same"}, {{7, 2}, {1}, {2}, "same"},
                                              {{8, 2}, {3}, {2}, "valid"}, {{9, 1}, {2}, {1}, "valid"}};
  return cases;
}

const std::vector<PoolingCase>& volume_cases() {
  static const std::vector<PoolingCase> cases{{{5, 7, 6, 2}, {3, 3, 2}, {2, 2, 2}, "same"},
                                              {{5, 5, 5, 1}, {2, 2, 2}, {2, 2, 2}, "same"},
                                              {{5, 7, 6, 2}, {2, 3, 3}, {2, 2, 3}, "same"},
                                              {{7, 6, 5, 2}, {3, 2, 3}, {2, 3, 1}, "valid"}};
  return cases;
}

// The message of the ConfigError `make` throws ("" if none).
template <typename F>
std::string config_error(F make) {
  try {
    make();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Pooling1D, KerasDefaultsAndConformance) {
  MaxPooling1D p;
  EXPECT_EQ(at::IntArrayRef(*p->options.pool_size()).vec(), (std::vector<int64_t>{2}));
  EXPECT_EQ(*p->options.strides(), (std::vector<int64_t>{2}));  // strides = pool_size
  EXPECT_EQ(p->options.padding(), "valid");
  expect_layer_conformance(MaxPooling1D().ptr(), LayerConformance({9, 3}, {4, 3}));
  expect_layer_conformance(MaxPooling1D(MaxPooling1DOptions(3).strides(std::vector<int64_t>{2}).padding("same")).ptr(),
                           LayerConformance({9, 3}, {5, 3}));
  expect_layer_conformance(AveragePooling1D().ptr(), LayerConformance({9, 3}, {4, 3}));
  expect_layer_conformance(AveragePooling1D(AveragePooling1DOptions(3).padding("same")).ptr(),
                           LayerConformance({10, 2}, {4, 2}));
}

TEST(Pooling3D, KerasDefaultsAndConformance) {
  AveragePooling3D p;
  EXPECT_EQ(at::IntArrayRef(*p->options.pool_size()).vec(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(*p->options.strides(), (std::vector<int64_t>{2, 2, 2}));
  expect_layer_conformance(MaxPooling3D().ptr(), LayerConformance({5, 6, 7, 2}, {2, 3, 3, 2}));
  expect_layer_conformance(
      MaxPooling3D(MaxPooling3DOptions({3, 2, 3}).strides(std::vector<int64_t>{2}).padding("same")).ptr(),
      LayerConformance({5, 6, 7, 2}, {3, 3, 4, 2}));
  expect_layer_conformance(AveragePooling3D().ptr(), LayerConformance({4, 5, 6, 3}, {2, 2, 3, 3}));
  expect_layer_conformance(
      AveragePooling3D(AveragePooling3DOptions(3).strides(std::vector<int64_t>{2, 1, 2}).padding("same")).ptr(),
      LayerConformance({5, 4, 5, 1}, {3, 4, 3, 1}));
}

TEST(Pooling1D, KnownSequence) {
  // Steps 0..4 of one channel, pool 2 stride 2 "same": windows {0, 1}, {2, 3}, {4} (the padded step after).
  auto x = at::arange(5, at::kFloat).reshape({1, 5, 1});
  auto avg =
      torchfit::testing::run_layer(AveragePooling1D(AveragePooling1DOptions(2).padding("same")).ptr(), {5, 1}, x);
  EXPECT_TRUE(at::allclose(avg, at::tensor({0.5f, 2.5f, 4.0f}).reshape({1, 3, 1}))) << avg;
  auto max = torchfit::testing::run_layer(MaxPooling1D(MaxPooling1DOptions(2).padding("same")).ptr(), {5, 1}, -x);
  EXPECT_TRUE(at::allclose(max, at::tensor({0.0f, -2.0f, -4.0f}).reshape({1, 3, 1}))) << max;
}

TEST(Pooling1D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_pooling_matches_tensorflow<MaxPooling1D, 1>("max_pool", sequence_cases());
  torchfit::testing::expect_pooling_matches_tensorflow<AveragePooling1D, 1>("avg_pool", sequence_cases());
}

TEST(Pooling3D, MatchesTensorFlowAtOddSizesAndStrides) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_pooling_matches_tensorflow<MaxPooling3D, 3>("max_pool", volume_cases());
  torchfit::testing::expect_pooling_matches_tensorflow<AveragePooling3D, 3>("avg_pool", volume_cases());
}

TEST(Pooling1D3D, ConfigIsKerasAndReadsKerasForms) {
  auto layer = layer_from_json(
      {{"class_name", "MaxPooling1D"}, {"config", {{"name", "p1"}, {"pool_size", {3}}, {"padding", "same"}}}});
  EXPECT_EQ(layer->config(),
            (nlohmann::json{{"name", "p1"}, {"pool_size", {3}}, {"strides", {3}}, {"padding", "same"}}));
  layer = layer_from_json(
      {{"class_name", "AveragePooling3D"}, {"config", {{"name", "p3"}, {"pool_size", 2}, {"strides", {1, 2, 1}}}}});
  EXPECT_EQ(layer->config(),
            (nlohmann::json{{"name", "p3"}, {"pool_size", {2, 2, 2}}, {"strides", {1, 2, 1}}, {"padding", "valid"}}));
  // strides as one integer, as Keras's constructors take it (MaxPooling1D(2, strides=1)), for every rank.
  for (const std::string cls : {"MaxPooling1D", "AveragePooling2D", "MaxPooling3D"}) {
    layer = layer_from_json({{"class_name", cls}, {"config", {{"name", "s"}, {"pool_size", 3}, {"strides", 1}}}});
    const size_t d = cls.find("1D") != std::string::npos ? 1 : cls.find("2D") != std::string::npos ? 2 : 3;
    EXPECT_EQ(layer->config()["strides"], nlohmann::json(std::vector<int64_t>(d, 1))) << cls;
  }
  const std::string msg = torchfit::testing::layer_config_error(
      {{"class_name", "MaxPooling3D"}, {"config", {{"name", "m3"}, {"pool_size", {2, 2}}}}});
  EXPECT_NE(msg.find("layer 'm3' (MaxPooling3D): field 'pool_size' must be an integer or a list of 3 integers"),
            std::string::npos)
      << msg;
}

TEST(Pooling1D3D, BadArgumentsAndInputsNameTheLayer) {
  EXPECT_NE(config_error([] { MaxPooling1D(MaxPooling1DOptions(0).name("m")); }).find("layer 'm' (MaxPooling1D)"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              AveragePooling1D(AveragePooling1DOptions(2).padding("causal").name("a"));
            }).find("layer 'a' (AveragePooling1D): padding must be 'valid' or 'same'"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              MaxPooling3D(MaxPooling3DOptions(2).strides(std::vector<int64_t>{1, 2}).name("m"));
            }).find("layer 'm' (MaxPooling3D): strides must be one value or 3 values"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              Sequential m;
              m->add(MaxPooling1D(MaxPooling1DOptions().name("p").input_shape(Shape{4, 4, 3})));
            }).find("layer 'p' (MaxPooling1D) expects a sequence (steps, channels), got (None, 4, 4, 3)"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              Sequential m;
              m->add(AveragePooling3D(AveragePooling3DOptions().name("p").input_shape(Shape{4, 3})));
            }).find("layer 'p' (AveragePooling3D) expects a volume (D, H, W, C)"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              Sequential m;
              m->add(MaxPooling3D(MaxPooling3DOptions({2, 5, 2}).name("p").input_shape(Shape{4, 4, 4, 1})));
            }).find("layer 'p' (MaxPooling3D): pool 2x5x2 is larger than its input (None, 4, 4, 4, 1)"),
            std::string::npos);
}
