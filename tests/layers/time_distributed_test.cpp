// TimeDistributed: Dense, Conv2D, MaxPooling2D and Flatten over each time step against a float64 NumPy
// reference written from Keras 3's TimeDistributed.call (the wrapped op called step by step), Keras's output
// shapes, the input and weight gradients, conformance, the wrapped layer's Keras weights, the config round
// trip, and bad inputs refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/lstm.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/time_distributed.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/recurrent_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

// A named namespace: the tests compile in unity batches.
namespace time_distributed_test {
namespace {

void expect_refused(const std::function<void()>& make, const std::string& word) {
  torchfit::testing::expect_refused_naming(make, "TimeDistributed", word);
}

struct Case {
  std::shared_ptr<Layer> layer;
  std::vector<int64_t> in, out;  // Keras shapes
  nlohmann::json reference;      // the wrapped layer as the reference's op
};

std::vector<Case> cases() {
  return {
      {Dense(DenseOptions(4)).ptr(), {5, 3}, {5, 4}, {{"op", "dense"}}},
      {Dense(DenseOptions(2)).ptr(), {3, 4, 5}, {3, 4, 2}, {{"op", "dense"}}},  // (T, S, C), held (N, C, T, S)
      {Conv2D(Conv2DOptions(3, 2).padding("same").strides(2)).ptr(),
       {3, 5, 6, 2},
       {3, 3, 3, 3},
       {{"op", "conv2d"}, {"strides", {2, 2}}, {"dilation_rate", {1, 1}}, {"padding", "same"}}},
      {MaxPooling2D(MaxPooling2DOptions(2)).ptr(),
       {2, 4, 5, 3},
       {2, 2, 2, 3},
       {{"op", "max_pool"}, {"pool_size", {2, 2}}, {"strides", {2, 2}}, {"padding", "valid"}}},
  };
}

nlohmann::json request(const Case& c) { return {{"op", "time_distributed"}, {"layer", c.reference}}; }

std::vector<std::string> weight_names(const Layer& layer) {
  std::vector<std::string> names;
  for (const auto& n : layer.keras_weight_names()) names.push_back("w_" + n);
  return names;
}

}  // namespace

TEST(TimeDistributed, DenseConvAndPoolingPerStepMatchKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const Case& c : cases()) {
    SCOPED_TRACE(request(c).dump() + " over " + format_shape(c.in));
    TimeDistributed layer(TimeDistributedOptions(c.layer));
    auto [x, y] = torchfit::testing::random_forward(layer.ptr(), c.in);
    EXPECT_EQ(layer->output_shape(), c.out);
    nlohmann::json req = request(c);
    req["x"] = torchfit::testing::tensor_json(x);
    const auto names = weight_names(*layer);
    const auto weights = layer->keras_weights();
    for (size_t i = 0; i < names.size(); ++i) req[names[i]] = torchfit::testing::tensor_json(weights[i]);
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
  }
}

TEST(TimeDistributed, InputAndWeightGradientsMatchKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const Case& c : cases()) {
    if (c.reference["op"] == "max_pool") continue;  // piecewise: ties would make central differences unfit
    SCOPED_TRACE(request(c).dump());
    TimeDistributed layer(TimeDistributedOptions(c.layer));
    torchfit::testing::expect_gradients_match_reference(layer.ptr(), c.in, request(c), {"w_kernel", "w_bias"});
  }
}

TEST(TimeDistributed, KerasOutputShapesAndConformance) {
  expect_layer_conformance(TimeDistributed(TimeDistributedOptions(Dense(DenseOptions(4)))).ptr(),
                           LayerConformance({5, 3}, {5, 4}).trainable_params(16));
  expect_layer_conformance(TimeDistributed(TimeDistributedOptions(Conv2D(Conv2DOptions(2, 3)))).ptr(),
                           LayerConformance({2, 6, 5, 3}, {2, 4, 3, 2}).trainable_params(3 * 3 * 3 * 2 + 2));
  expect_layer_conformance(TimeDistributed(TimeDistributedOptions(Flatten())).ptr(),
                           LayerConformance({3, 2, 4, 5}, {3, 40}));
  expect_layer_conformance(TimeDistributed(TimeDistributedOptions(Dense(DenseOptions(2)))).ptr(),
                           LayerConformance({3, 4, 5}, {3, 4, 2}).trainable_params(12));
}

TEST(TimeDistributed, FlattenKeepsKerasElementOrderPerStep) {
  // Keras flattens each step (H, W, C) in channels-last order: step t of the output is that step's image,
  // read h, w, c.
  TimeDistributed layer(TimeDistributedOptions(Flatten()).input_shape(Shape{2, 3, 4, 2}));
  Sequential m;
  m->add(layer);
  const at::Tensor x = at::arange(2 * 2 * 3 * 4 * 2, at::kFloat).reshape({2, 2, 3, 4, 2});  // (N, T, H, W, C)
  const at::Tensor y = m->forward(x);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{2, 2, 24}));
  EXPECT_TRUE(at::equal(y, x.reshape({2, 2, 24})));
}

TEST(TimeDistributed, WeightsAndConfigAreTheWrappedLayers) {
  Dense inner(DenseOptions(3).activation("relu"));
  TimeDistributed layer(TimeDistributedOptions(inner).input_shape(Shape{4, 2}).name("td"));
  Sequential m;
  m->add(layer);
  EXPECT_EQ(layer->layer.get(), inner.ptr().get()) << "the instance itself, as Keras";
  EXPECT_EQ(layer->keras_weight_names(), (std::vector<std::string>{"kernel", "bias"}));
  EXPECT_TRUE(at::equal(layer->keras_weights()[0], inner->keras_weights()[0]));
  const nlohmann::json c = layer->config();
  EXPECT_EQ(c.at("layer").at("class_name"), "Dense");
  EXPECT_EQ(c.at("layer").at("config").at("name"), "dense");
  EXPECT_EQ(c.at("layer").at("config").at("activation"), "relu");
  EXPECT_EQ(layer_from_json(layer_to_json(*layer))->config(), c);
  nlohmann::json typo = layer_to_json(*layer);
  typo["config"]["layers"] = typo["config"]["layer"];
  expect_refused([&] { layer_from_json(typo); }, "layers");
  nlohmann::json bad_inner = layer_to_json(*layer);
  bad_inner["config"]["layer"]["config"]["units"] = -1;
  expect_refused([&] { layer_from_json(bad_inner); }, "units");
}

TEST(TimeDistributed, BadInputsNameTheLayer) {
  expect_refused(
      [] {
        Sequential m;
        m->add(TimeDistributed(TimeDistributedOptions(Dense(DenseOptions(2))).input_shape(Shape{6})));
      },
      "at least two axes");
  expect_refused([] { (void)TimeDistributed(TimeDistributedOptions(Add())); }, "multi-input");
  expect_refused([] { (void)TimeDistributed(TimeDistributedOptions(std::shared_ptr<Layer>())); }, "needs a layer");
  expect_refused(
      [] {
        Sequential m;  // each step (5) is not an image for Conv2D
        m->add(TimeDistributed(TimeDistributedOptions(Conv2D(Conv2DOptions(2, 3))).input_shape(Shape{4, 5})));
      },
      "its layer");
}

}  // namespace time_distributed_test
