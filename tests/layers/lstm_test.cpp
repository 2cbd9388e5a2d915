// LSTM: the fused at::lstm path and the step loop, each against a float64 NumPy reference written from Keras 3's
// LSTMCell (return_sequences, go_backwards, another activation, no bias), their input and weight gradients,
// conformance, Keras's weight layout and initializers (the forget gate's bias ones), training-only dropout, and
// bad arguments, inputs and weights refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/lstm.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/recurrent_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

// A named namespace: the tests compile in unity batches.
namespace lstm_test {
namespace {

LSTM built_lstm(LSTMOptions o) { return torchfit::testing::built_recurrent<LSTM>(std::move(o)); }

void expect_refused(const std::function<void()>& make, const std::string& word) {
  torchfit::testing::expect_refused_naming(make, "LSTM", word);
}

nlohmann::json lstm_request(const LSTMOptions& o) {
  return {{"op", "lstm"},
          {"activation", o.activation()},
          {"recurrent_activation", o.recurrent_activation()},
          {"return_sequences", o.return_sequences()},
          {"go_backwards", o.go_backwards()}};
}

struct Case {
  LSTMOptions options;
  bool fused;
};

std::vector<Case> cases() {
  return {{LSTMOptions(3), true},
          {LSTMOptions(3).return_sequences(true).go_backwards(true), true},
          {LSTMOptions(2).use_bias(false).return_sequences(true), true},
          {LSTMOptions(3).activation("relu").return_sequences(true), false},
          {LSTMOptions(3).recurrent_activation("linear").go_backwards(true), false}};
}

}  // namespace

TEST(LSTM, FusedAndLoopPathsMatchKerasCell) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_recurrent_cases_match_reference<LSTM>(cases(), lstm_request);
}

TEST(LSTM, InputAndWeightGradientsMatchKerasCellOnBothPaths) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_recurrent_case_gradients_match_reference<LSTM>(cases(), lstm_request);
}

TEST(LSTM, Conforms) {
  expect_layer_conformance(LSTM(LSTMOptions(5)).ptr(), LayerConformance({4, 3}, {5}).trainable_params(180));
  expect_layer_conformance(LSTM(LSTMOptions(2).return_sequences(true).activation("relu")).ptr(),
                           LayerConformance({4, 3}, {4, 2}).trainable_params(48));
}

TEST(LSTM, KerasLayoutAndInitializers) {
  at::manual_seed(1);
  LSTM layer = LSTM(LSTMOptions(6).input_shape(Shape{5, 4}));
  Sequential m;
  m->add(layer);
  const auto w = layer->keras_weights();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].sizes(), (std::vector<int64_t>{4, 24}));
  EXPECT_EQ(w[1].sizes(), (std::vector<int64_t>{6, 24}));
  EXPECT_EQ(w[2].sizes(), (std::vector<int64_t>{24}));
  EXPECT_TRUE(at::allclose(at::matmul(w[1], w[1].t()), at::eye(6), 1e-4, 1e-5)) << "orthogonal recurrent kernel";
  const at::Tensor ones = at::ones({6});
  EXPECT_TRUE(at::equal(w[2].narrow(0, 6, 6), ones)) << "unit_forget_bias";
  EXPECT_EQ(w[2].narrow(0, 0, 6).abs().max().item<double>(), 0.0);
  EXPECT_EQ(w[2].narrow(0, 12, 12).abs().max().item<double>(), 0.0);
  EXPECT_LE(w[0].abs().max().item<double>(), std::sqrt(6.0 / 28.0));
  LSTM plain = LSTM(LSTMOptions(2).unit_forget_bias(false).input_shape(Shape{5, 4}));
  Sequential m2;
  m2->add(plain);
  EXPECT_EQ(plain->bias.abs().max().item<double>(), 0.0);
}

TEST(LSTM, DropoutOnlyInTrainingAndRecurrentDropoutRunsTheLoop) {
  LSTM layer = built_lstm(LSTMOptions(3).dropout(0.5).recurrent_dropout(0.3).return_sequences(true));
  const at::Tensor x = at::randn({2, 4, 3});
  layer->eval();
  const at::Tensor a = layer->forward(x);
  EXPECT_TRUE(at::equal(a, layer->forward(x))) << "no masks in inference";
  LSTM plain = built_lstm(LSTMOptions(3).return_sequences(true));
  EXPECT_TRUE(at::allclose(a, plain->forward(x)));
  EXPECT_TRUE(layer->fused(false));
  EXPECT_FALSE(layer->fused(true)) << "a recurrent mask needs the step loop";
  layer->train();
  at::manual_seed(7);
  EXPECT_FALSE(at::allclose(layer->forward(x), a));
  LSTM input_only = built_lstm(LSTMOptions(3).dropout(0.5).return_sequences(true));
  input_only->train();
  at::manual_seed(7);
  EXPECT_FALSE(at::allclose(input_only->forward(x), a)) << "input dropout on the fused path";
}

TEST(LSTM, BadInputArgumentsAndWeightsNameTheLayer) {
  expect_refused([] { LSTM(LSTMOptions(0)); }, "units");
  expect_refused([] { LSTM(LSTMOptions(2).return_state(true)); }, "return_state");
  expect_refused([] { LSTM(LSTMOptions(2).activation("nope")); }, "nope");
  expect_refused([] { LSTM(LSTMOptions(2).recurrent_activation("nope2")); }, "nope2");
  expect_refused([] { LSTM(LSTMOptions(2).implementation(3)); }, "implementation");
  expect_refused(
      [] {
        Sequential m;
        m->add(LSTM(LSTMOptions(2).input_shape(Shape{4, 3, 2})));
      },
      "sequence");
  LSTM layer = built_lstm(LSTMOptions(2));
  expect_refused(
      [&] {
        layer->set_keras_weights({at::zeros({3, 8}), at::zeros({2, 6}), at::zeros({8})});
      },
      "recurrent_kernel");
  expect_refused([&] { layer->set_keras_weights({at::zeros({3, 8}), at::zeros({2, 8}), at::zeros({6})}); }, "bias");
  expect_refused([&] { layer->set_keras_weights({at::zeros({3, 8}), at::zeros({2, 8})}); }, "weights");
}

// Keras's recurrent_regularizer is the recurrent_kernel's (as depthwise_regularizer is the depthwise_kernel's).
TEST(LSTM, RecurrentRegularizerIsTheRecurrentKernels) {
  nlohmann::json j = layer_to_json(*LSTM(LSTMOptions(3)));
  j["config"]["recurrent_regularizer"] = {{"class_name", "L2"}, {"config", {{"l2", 0.5}}}};
  j["config"]["input_shape"] = {4, 2};
  const std::shared_ptr<Layer> layer = layer_from_json(j);
  Sequential m;
  m->add(layer);
  const at::Tensor r = layer->named_parameters()["recurrent_kernel"];
  EXPECT_NEAR(layer->regularization_loss().item<double>(), 0.5 * r.square().sum().item<double>(), 1e-5);
  EXPECT_EQ(layer_to_json(*layer)["config"]["recurrent_regularizer"]["config"]["l2"], 0.5);
}

TEST(LSTM, ConfigRoundTrips) {
  LSTM layer(LSTMOptions(4).recurrent_activation("relu").unit_forget_bias(false).return_sequences(true).dropout(0.25));
  const nlohmann::json j = layer_to_json(*layer);
  EXPECT_EQ(j["config"]["recurrent_activation"], "relu");
  EXPECT_EQ(j["config"]["unit_forget_bias"], false);
  EXPECT_EQ(layer_to_json(*layer_from_json(j)), j);
}

}  // namespace lstm_test
