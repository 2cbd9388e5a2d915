// The augmentation layers' argument checks (image_augmentation.cpp's keras_value_range and each layer's
// constructor) against Keras 3's own rule: keras_augmentation_arguments_reference.py, written from Keras 3's
// constructors, says for every case whether Keras builds the layer. What Keras refuses torchfit refuses; what
// Keras accepts torchfit takes, except the nonsense docs/data_pipeline.md lists ("Arguments refused where Keras 3
// accepts them"), which torchfit refuses. Every refusal is a ConfigError naming the layer, the argument and
// the value. Each case goes through a Keras 3 model config (the import path of a Keras file).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/rand_augment.h>
#include <torchfit/layers/random_erasing.h>
#include <torchfit/layers/random_hue.h>
#include "support/augmentation_checks.h"
#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_config_error;

namespace {

struct ArgumentCase {
  std::string class_name;
  nlohmann::json config;
  /// The argument the message must name and how it must show the value ("got 1.5"; empty when it builds).
  std::string argument, value;
};

// Keras 3's verdict per case: 1 where it builds the layer, 0 where it raises.
std::vector<bool> keras_accepts(const std::vector<ArgumentCase>& cases) {
  nlohmann::json request = {{"op", "augment_arguments"}, {"cases", nlohmann::json::array()}};
  for (const auto& c : cases) request["cases"].push_back({{"class_name", c.class_name}, {"config", c.config}});
  const at::Tensor verdicts = torchfit::testing::keras_reference(request);
  std::vector<bool> accepted;
  if (!verdicts.defined()) return accepted;
  for (int64_t i = 0; i < verdicts.numel(); ++i) accepted.push_back(verdicts[i].item<double>() == 1.0);
  return accepted;
}

// The case as a Keras 3 model file's config: a Sequential of the layer (named "x") on (5, 7, 3) images.
void build_from_keras3(const ArgumentCase& c) {
  model_from_json(torchfit::testing::keras3_sequential_of(
      {5, 7, 3}, torchfit::testing::keras3_augmentation_layer(c.class_name, "x", c.config)));
}

// Each case refused by torchfit with a ConfigError naming layer 'x', its class, the argument and the value (the
// model reader names the layer as "config.layers[1] ('x', RandomHue)").
void expect_refused(const std::vector<ArgumentCase>& cases) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.class_name + " " + c.config.dump());
    try {
      build_from_keras3(c);
      ADD_FAILURE() << "built, expected a ConfigError naming " << c.argument;
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("('x', " + c.class_name + ")"), std::string::npos) << what;  // the model file's layer
      EXPECT_NE(what.find(c.argument), std::string::npos) << what;
      EXPECT_NE(what.find(c.value), std::string::npos) << what;
    }
  }
}

}  // namespace

TEST(AugmentationArguments, WhatKeras3RefusesIsRefusedNamingTheArgument) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  using J = nlohmann::json;
  const std::vector<ArgumentCase> cases = {
      {"AutoContrast", {{"value_range", {1}}}, "value_range", "got [1]"},
      {"AutoContrast", {{"value_range", {0, 1, 2}}}, "value_range", "got [0, 1, 2]"},
      {"Equalization", {{"value_range", J::array()}}, "value_range", "got []"},
      {"Solarization", {{"addition_factor", 1.2}}, "addition_factor", "got 1.2"},
      {"Solarization", {{"threshold_factor", {-0.1, 0.5}}}, "threshold_factor", "got [-0.1, 0.5]"},
      {"Solarization", {{"value_range", {3}}}, "value_range", "got [3]"},
      {"RandomPosterization", {{"factor", 9}}, "factor", "got 9"},
      {"RandomPosterization", {{"factor", {9, 10}}}, "factor", "got [9, 10]"},
      {"RandomPosterization", {{"factor", 4}, {"value_range", {1, 2, 3}}}, "value_range", "got [1, 2, 3]"},
      {"RandomHue", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandomHue", {{"factor", -0.1}}, "factor", "got -0.1"},
      {"RandomHue", {{"factor", {1.5, 2}}}, "factor", "got [1.5, 2]"},
      {"RandomSaturation", {{"factor", -1.5}}, "factor", "got -1.5"},
      {"RandomSaturation", {{"factor", {1.2, 1.5}}}, "factor", "got [1.2, 1.5]"},
      {"RandomSaturation", {{"factor", 0.2}, {"value_range", {0}}}, "value_range", "got [0]"},
      {"RandomColorJitter", {{"hue_factor", 2.0}}, "hue_factor", "got 2"},
      {"RandomColorJitter", {{"brightness_factor", {1.5, 2}}}, "brightness_factor", "got [1.5, 2]"},
      {"RandomColorJitter", {{"contrast_factor", -0.5}}, "contrast_factor", "got -0.5"},
      {"RandomColorJitter", {{"saturation_factor", 1.5}}, "saturation_factor", "got 1.5"},
      {"RandomColorJitter", {{"brightness_factor", 0.1}, {"value_range", {0}}}, "value_range", "got [0]"},
      {"RandomColorDegeneration", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandomColorDegeneration", {{"factor", 0.1}, {"value_range", {0}}}, "value_range", "got [0]"},
      {"RandomSharpness", {{"factor", -0.2}}, "factor", "got -0.2"},
      {"RandomSharpness", {{"factor", {1.5, 2}}}, "factor", "got [1.5, 2]"},
      {"RandomSharpness", {{"factor", 0.5}, {"value_range", {1, 2, 3}}}, "value_range", "got [1, 2, 3]"},
      {"RandomErasing", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandomErasing", {{"scale", {1.2, 1.5}}}, "scale", "got [1.2, 1.5]"},
      {"RandomErasing", {{"scale", -0.1}}, "scale", "got -0.1"},
      {"RandomErasing", {{"fill_value", {1, 2}}}, "fill_value", "bad value [1,2]"},
      {"CutMix", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"CutMix", {{"factor", {1.5, 2}}}, "factor", "got [1.5, 2]"},
      {"RandAugment", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandAugment", {{"factor", {0.5, 2}}}, "factor", "got [0.5, 2]"},  // Keras: its RandomShear's check
      {"RandAugment", {{"factor", {-0.5, 0.5}}}, "factor", "got [-0.5, 0.5]"},
      {"RandAugment", {{"interpolation", "cubic"}}, "interpolation", "got 'cubic'"},
      {"RandAugment", {{"value_range", {1}}}, "value_range", "got [1]"},
      {"RandAugment", {{"num_ops", -1}}, "num_ops", "got -1"},  // Keras: at the first call (randint's shape)
      {"RandomBrightness", {{"factor", -1.2}}, "factor", "got -1.2"},
      {"RandomBrightness", {{"factor", {1.5, 2}}}, "factor", "got [1.5, 2]"},
      {"RandomBrightness", {{"factor", 0.1}, {"value_range", {1, 2, 3}}}, "value_range", "got [1, 2, 3]"},
      {"RandomContrast", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandomContrast", {{"factor", -0.1}}, "factor", "got -0.1"},
      {"RandomContrast", {{"factor", {1.2, 2}}}, "factor", "got [1.2, 2]"},
      {"RandomGrayscale", {{"factor", 1.5}}, "factor", "got 1.5"},
      {"RandomGrayscale", {{"factor", -0.5}}, "factor", "got -0.5"},
  };
  const std::vector<bool> accepted = keras_accepts(cases);
  ASSERT_EQ(accepted.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_FALSE(accepted[i]) << "Keras 3 accepts " << cases[i].class_name << " " << cases[i].config.dump();
  }
  expect_refused(cases);
}

TEST(AugmentationArguments, NonsenseKeras3AcceptsIsRefusedAsDocumented) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  // docs/data_pipeline.md, "Arguments refused where Keras 3 accepts them": an empty value_range (every value
  // mapped to one point, or a division by zero), a reversed one where Keras takes it as given (the scaling
  // inverted, the clip empty), erasing fractions outside [0, 1], a Beta parameter ≤ 0, RandAugment's num_ops
  // and Equalization's bins beyond their bounds (a stalled step), posterization bits that are no integers.
  const std::vector<ArgumentCase> cases = {
      {"AutoContrast", {{"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"Equalization", {{"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"Equalization", {{"bins", 0}}, "bins", "got 0"},
      {"Equalization", {{"bins", 1000000000}}, "bins", "got 1000000000"},
      {"Solarization", {{"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomPosterization", {{"factor", 4}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomPosterization", {{"factor", 2.5}}, "factor", "got 2.5"},
      {"RandomPosterization", {{"factor", {-1, 4}}}, "factor", "got [-1, 4]"},
      {"RandomHue", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomHue", {{"factor", 0.2}, {"value_range", {255, 0}}}, "value_range", "got [255, 0]"},
      {"RandomSaturation", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomColorJitter", {{"hue_factor", 0.1}, {"value_range", {1, 0}}}, "value_range", "got [1, 0]"},
      {"RandomColorJitter", {{"contrast_factor", 0.1}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomColorDegeneration", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomSharpness", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomErasing", {{"scale", {0.5, 2.0}}}, "scale", "got [0.5, 2]"},
      {"RandomErasing", {{"scale", {-0.5, 0.5}}}, "scale", "got [-0.5, 0.5]"},
      {"RandomErasing", {{"value_range", {255, 0}}}, "value_range", "got [255, 0]"},
      {"RandomErasing", {{"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"MixUp", {{"alpha", 0.0}}, "alpha", "got 0"},
      {"MixUp", {{"alpha", -0.5}}, "alpha", "got -0.5"},
      {"CutMix", {{"factor", {-0.5, 0.5}}}, "factor", "got [-0.5, 0.5]"},
      {"RandAugment", {{"num_ops", 1000000000}}, "num_ops", "got 1000000000"},
      {"RandAugment", {{"num_ops", 101}}, "num_ops", "got 101"},
      {"RandAugment", {{"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandAugment", {{"value_range", {255, 0}}}, "value_range", "got [255, 0]"},
      {"RandomBrightness", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
      {"RandomContrast", {{"factor", 0.2}, {"value_range", {255, 0}}}, "value_range", "got [255, 0]"},
      {"RandomContrast", {{"factor", 0.2}, {"value_range", {5, 5}}}, "value_range", "got [5, 5]"},
  };
  const std::vector<bool> accepted = keras_accepts(cases);
  ASSERT_EQ(accepted.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_TRUE(accepted[i]) << "Keras 3 refuses " << cases[i].class_name << " " << cases[i].config.dump()
                             << ": no difference to document";
  }
  expect_refused(cases);
}

TEST(AugmentationArguments, WhatKeras3AcceptsAndMeansIsTaken) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  // A reversed value_range where Keras sorts it, a pair that only overlaps the factor's bounds, the bounds.
  const std::vector<ArgumentCase> cases = {
      {"AutoContrast", {{"value_range", {255, 0}}}, "", ""},
      {"Equalization", {{"bins", 1}}, "", ""},
      {"Equalization", {{"bins", 65536}, {"value_range", {1, 0}}}, "", ""},
      {"Solarization", {{"addition_factor", {0.5, 0.2}}, {"threshold_factor", 1}}, "", ""},
      {"RandomPosterization", {{"factor", {2, 2}}, {"value_range", {1, 0}}}, "", ""},
      {"RandomHue", {{"factor", {0.5, 2}}}, "", ""},
      {"RandomHue", {{"factor", {-0.5, 0.5}}, {"value_range", {0, 1}}}, "", ""},
      {"RandomSaturation", {{"factor", {0.5, 2}}, {"value_range", {1, 0}}}, "", ""},
      {"RandomColorJitter", nlohmann::json::object(), "", ""},
      {"RandomColorDegeneration", {{"factor", {-2, 0.5}}}, "", ""},
      {"RandomSharpness", {{"factor", {-0.5, 0.5}}, {"value_range", {255, 0}}}, "", ""},
      {"RandomErasing", {{"factor", {0.5, 2}}, {"scale", 0.5}}, "", ""},
      {"RandomErasing", {{"scale", {0, 1}}, {"fill_value", {1, 2, 3}}}, "", ""},
      {"MixUp", {{"alpha", 5.0}}, "", ""},
      {"CutMix", {{"factor", {0.5, 3}}}, "", ""},
      {"RandAugment", {{"num_ops", 0}}, "", ""},
      {"RandAugment", {{"num_ops", 100}, {"factor", {0, 1}}}, "", ""},
      {"RandomBrightness", {{"factor", {0.5, 3}}, {"value_range", {255, 0}}}, "", ""},
      {"RandomContrast", {{"factor", {-0.5, 0.5}}}, "", ""},
      {"RandomGrayscale", {{"factor", 0}}, "", ""},
      {"RandomGrayscale", {{"factor", 1}}, "", ""},
  };
  const std::vector<bool> accepted = keras_accepts(cases);
  ASSERT_EQ(accepted.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].class_name + " " + cases[i].config.dump());
    EXPECT_TRUE(accepted[i]) << "Keras 3 refuses it";
    EXPECT_NO_THROW(build_from_keras3(cases[i]));
  }
}

TEST(AugmentationArguments, KerasValueRangeSortsOrKeepsOrderAndRefusesEmptyOrInfinite) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(keras_value_range({255, 0}, "w", ValueRangeOrder::sorted), std::make_pair(0.0, 255.0));
  EXPECT_EQ(keras_value_range({-1, 1}, "w", ValueRangeOrder::as_given), std::make_pair(-1.0, 1.0));
  expect_config_error(
      [] {
        keras_value_range({255, 0}, "w", ValueRangeOrder::as_given);
      },
      "w: value_range must be [low, high] with low < high, got [255, 0]");
  for (const auto order : {ValueRangeOrder::sorted, ValueRangeOrder::as_given}) {
    expect_config_error(
        [&] {
          keras_value_range({5, 5}, "w", order);
        },
        "w: value_range must be two different numbers [low, high] (an empty range maps every value "
        "to one point), got [5, 5]");
    expect_config_error(
        [&] {
          keras_value_range({0, inf}, "w", order);
        },
        "w: value_range must be two finite numbers [low, high], got [0, inf]");
    expect_config_error(
        [&] {
          keras_value_range({std::nan(""), 1}, "w", order);
        },
        "w: value_range must be two finite numbers [low, high], got [nan, 1]");
    expect_config_error(
        [&] {
          keras_value_range({1, 2, 3}, "w", order);
        },
        "w: value_range must be two numbers [low, high], got [1, 2, 3]");
  }
  // The C++ options reach the same checks (values JSON cannot carry).
  expect_config_error(
      [&] {
        RandomHue(RandomHueOptions(0.1).value_range({-inf, 1.0}).name("h"));
      },
      "layer 'h' (RandomHue): value_range must be two finite numbers [low, high], got [-inf, 1]");
  expect_config_error(
      [&] {
        RandomErasing(RandomErasingOptions().fill_value({0.0, std::nan(""), 1.0}).name("e"));
      },
      "layer 'e' (RandomErasing): fill_value must be finite, got [0, nan, 1]");
}

TEST(RandAugment, NumOpsBeyondTheBoundIsRefusedAtOnceAndTheBoundTrains) {
  const auto started = std::chrono::steady_clock::now();
  expect_config_error([] { RandAugment(RandAugmentOptions().num_ops(1000000000).name("r")); },
                      "layer 'r' (RandAugment): num_ops must be in [0, 100], got 1000000000");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 1.0);
  EXPECT_EQ(RandAugmentImpl::max_num_ops, 100);
  // The bound itself: 100 operations on a small batch, one training forward, finite values.
  at::manual_seed(3);
  RandAugment layer(RandAugmentOptions().num_ops(RandAugmentImpl::max_num_ops));
  layer->train();
  const at::Tensor x = (at::rand({2, 3, 6, 5}) * 255.0).floor();
  const at::Tensor y = layer->forward(x);
  EXPECT_EQ(layer->draw_operations().numel(), 100);
  ASSERT_EQ(y.sizes(), x.sizes());
  EXPECT_TRUE(at::isfinite(y).all().item<bool>());
}
