// Conv1D: values against NumPy written from TensorFlow's conv1d (tests/layers/reference/
// keras_layers_reference.py) for valid, TensorFlow's asymmetric same and causal padding with strides and
// dilation; conformance; Keras weight layout; Keras's config (kernel_size as [k]); bad arguments.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/conv1d.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace conv1d_test {

TEST(Conv1D, MatchesTensorFlowForEveryPadding) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  struct Case {
    int64_t steps, k, s, d;
    std::string padding;
    Shape out;
  };
  for (const Case& c :
       {Case{10, 3, 1, 1, "valid", {8, 4}}, Case{10, 4, 3, 1, "same", {4, 4}}, Case{9, 3, 2, 2, "valid", {3, 4}},
        Case{7, 3, 1, 2, "causal", {7, 4}}, Case{8, 2, 2, 1, "causal", {4, 4}}, Case{6, 5, 1, 1, "same", {6, 4}}}) {
    SCOPED_TRACE(c.padding + " k" + std::to_string(c.k) + " s" + std::to_string(c.s) + " d" + std::to_string(c.d));
    Conv1D layer(Conv1DOptions(4, c.k).strides(c.s).dilation_rate(c.d).padding(c.padding));
    auto [x, y0] = torchfit::testing::random_forward(layer.ptr(), {c.steps, 3}, 2);
    at::manual_seed(5);
    layer->bias.data().copy_(at::randn({4}));
    at::NoGradGuard no_grad;
    const at::Tensor y = layer->forward(x);
    EXPECT_EQ(layer->output_shape(), c.out);
    torchfit::testing::expect_matches_reference(
        y, torchfit::testing::keras_reference({{"op", "conv1d"},
                                               {"x", tensor_json(x)},
                                               {"kernel", tensor_json(layer->keras_weights()[0])},
                                               {"bias", tensor_json(layer->bias)},
                                               {"strides", c.s},
                                               {"dilation_rate", c.d},
                                               {"padding", c.padding}}));
  }
}

TEST(Conv1D, ConformanceKerasLayoutAndConfig) {
  torchfit::testing::expect_layer_conformance(
      Conv1D(Conv1DOptions(4, 3).padding("causal").activation("relu")).ptr(),
      torchfit::testing::LayerConformance({6, 2}, {6, 4}).trainable_params(3 * 2 * 4 + 4));
  Conv1D layer(Conv1DOptions(5, 3));
  layer->build({8, 2});
  EXPECT_EQ(layer->keras_weights()[0].sizes(), at::IntArrayRef({3, 2, 5}));  // Keras (k, C_in, filters)
  EXPECT_EQ(layer->config()["kernel_size"], nlohmann::json::array({3}));
  // A Keras 3 config writes kernel_size, strides and dilation_rate as one-element lists.
  const nlohmann::json keras = {
      {"class_name", "Sequential"},
      {"config",
       {{"name", "s"},
        {"layers",
         {{{"class_name", "InputLayer"}, {"config", {{"batch_shape", {nullptr, 12, 3}}, {"name", "in"}}}},
          {{"class_name", "Conv1D"},
           {"config",
            {{"name", "c"},
             {"filters", 6},
             {"kernel_size", {5}},
             {"strides", {2}},
             {"padding", "same"},
             {"data_format", "channels_last"},
             {"dilation_rate", {1}},
             {"groups", 1},
             {"activation", "relu"},
             {"use_bias", true}}}}}}}}};
  const Model model = model_from_json(keras);
  EXPECT_EQ(model->output_shape(), (Shape{6, 6}));
}

TEST(Conv1D, BadArgumentsNameTheLayer) {
  EXPECT_THROW(Conv1D(Conv1DOptions(0, 3)), ConfigError);
  EXPECT_THROW(Conv1D(Conv1DOptions(2, 3).padding("full")), ConfigError);
  EXPECT_THROW(Conv1D(Conv1DOptions(2, 3).strides(0)), ConfigError);
  try {
    Conv1D(Conv1DOptions(2, 5))->build({3, 2});
    FAIL() << "a window longer than the sequence accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(Conv1D): the window of 5 steps is longer than the input"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Conv1D(Conv1DOptions(2, 3))->build({4, 4, 3}), ConfigError);
}

}  // namespace conv1d_test
