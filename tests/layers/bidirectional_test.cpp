// Bidirectional: every merge mode over SimpleRNN, LSTM and GRU (with and without return_sequences) against a
// float64 NumPy reference written from Keras 3's Bidirectional.call and the cells, the input and weight
// gradients against its central differences, conformance, Keras's weight order (forward then backward) and
// `weights`, the config round trip with Keras's names, and bad arguments refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/bidirectional.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/gru.h>
#include <torchfit/layers/lstm.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/simple_rnn.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/recurrent_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

// A named namespace: the tests compile in unity batches.
namespace bidirectional_test {
namespace {

void expect_refused(const std::function<void()>& make, const std::string& word) {
  torchfit::testing::expect_refused_naming(make, "Bidirectional", word);
}

struct Case {
  std::shared_ptr<Layer> layer;
  nlohmann::json reference;  // the wrapped layer as the reference's op
  std::string merge_mode;
};

std::vector<Case> cases() {
  const nlohmann::json lstm = {{"op", "lstm"}, {"activation", "tanh"}, {"recurrent_activation", "sigmoid"}};
  const nlohmann::json gru = {{"op", "gru"}, {"activation", "tanh"}, {"recurrent_activation", "sigmoid"}};
  const nlohmann::json rnn = {{"op", "simple_rnn"}, {"activation", "tanh"}};
  const auto seq = [](nlohmann::json j, bool s) {
    j["return_sequences"] = s;
    j["go_backwards"] = false;
    return j;
  };
  return {
      {LSTM(LSTMOptions(3)).ptr(), seq(lstm, false), "concat"},
      {LSTM(LSTMOptions(3).return_sequences(true)).ptr(), seq(lstm, true), "concat"},
      {LSTM(LSTMOptions(2).return_sequences(true)).ptr(), seq(lstm, true), "sum"},
      {GRU(GRUOptions(3).return_sequences(true)).ptr(), seq(gru, true), "mul"},
      {GRU(GRUOptions(2)).ptr(), seq(gru, false), "ave"},
      {SimpleRNN(SimpleRNNOptions(3).return_sequences(true)).ptr(), seq(rnn, true), "ave"},
      {SimpleRNN(SimpleRNNOptions(2)).ptr(), seq(rnn, false), "sum"},
  };
}

// The Keras weight names of the reference's request, in keras_weights()'s order.
std::vector<std::string> reference_names() {
  std::vector<std::string> names;
  for (const char* d : {"forward_", "backward_"}) {
    for (const char* w : {"kernel", "recurrent_kernel", "bias"}) names.push_back(std::string(d) + w);
  }
  return names;
}

nlohmann::json request(const Case& c) {
  return {{"op", "bidirectional"}, {"layer", c.reference}, {"merge_mode", c.merge_mode}};
}

}  // namespace

TEST(Bidirectional, EveryMergeModeMatchesKerasOverEachRecurrentLayer) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const Case& c : cases()) {
    SCOPED_TRACE(request(c).dump());
    Bidirectional layer(BidirectionalOptions(c.layer).merge_mode(c.merge_mode).input_shape(Shape{4, 3}));
    Sequential m;
    m->add(layer);
    at::manual_seed(3);
    for (auto& p : layer->parameters()) p.data().copy_(at::randn_like(p) * 0.5);
    m->eval();
    at::manual_seed(5);
    const at::Tensor x = at::randn({2, 4, 3});
    nlohmann::json req = request(c);
    req["x"] = torchfit::testing::tensor_json(x);
    const auto names = reference_names();
    const auto weights = layer->keras_weights();
    ASSERT_EQ(weights.size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) req[names[i]] = torchfit::testing::tensor_json(weights[i]);
    at::NoGradGuard no_grad;
    torchfit::testing::expect_matches_reference(m->forward(x), torchfit::testing::keras_reference(req));
  }
}

TEST(Bidirectional, InputAndWeightGradientsMatchKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const Case& c : cases()) {
    SCOPED_TRACE(request(c).dump());
    torchfit::testing::expect_gradients_match_reference(
        Bidirectional(BidirectionalOptions(c.layer).merge_mode(c.merge_mode)).ptr(), {4, 3}, request(c),
        reference_names());
  }
}

TEST(Bidirectional, Conforms) {
  expect_layer_conformance(Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(5)))).ptr(),
                           LayerConformance({4, 3}, {10}).trainable_params(360));
  expect_layer_conformance(
      Bidirectional(BidirectionalOptions(GRU(GRUOptions(2).return_sequences(true))).merge_mode("sum")).ptr(),
      LayerConformance({4, 3}, {4, 2}).trainable_params(2 * (3 * 2 * 3 + 3 * 2 * 2 + 2 * 3 * 2)));
}

TEST(Bidirectional, KerasNamesWeightOrderAndTheWeightsArgument) {
  Bidirectional layer(BidirectionalOptions(LSTM(LSTMOptions(2).name("enc"))).input_shape(Shape{4, 3}));
  EXPECT_EQ(layer->forward_layer->name(), "forward_enc");
  EXPECT_EQ(layer->backward_layer->name(), "backward_enc");
  EXPECT_FALSE(layer->forward_layer->recurrent().go_backwards);
  EXPECT_TRUE(layer->backward_layer->recurrent().go_backwards);
  Sequential m;
  m->add(layer);
  EXPECT_EQ(layer->keras_weight_names(),
            (std::vector<std::string>{"forward_enc/kernel", "forward_enc/recurrent_kernel", "forward_enc/bias",
                                      "backward_enc/kernel", "backward_enc/recurrent_kernel", "backward_enc/bias"}));
  const auto w = layer->keras_weights();
  ASSERT_EQ(w.size(), 6u);
  EXPECT_TRUE(at::equal(w[0], layer->forward_layer->kernel));
  EXPECT_TRUE(at::equal(w[3], layer->backward_layer->kernel));
  // Keras's `weights`: the first half into the forward layer, the rest into the backward one.
  std::vector<at::Tensor> given;
  for (const auto& t : w) given.push_back(at::randn_like(t));
  Bidirectional preset(BidirectionalOptions(LSTM(LSTMOptions(2))).weights(given).input_shape(Shape{4, 3}));
  Sequential m2;
  m2->add(preset);
  EXPECT_TRUE(at::equal(preset->forward_layer->recurrent_kernel, given[1]));
  EXPECT_TRUE(at::equal(preset->backward_layer->bias, given[5]));
  // The layer given is a template: its own weights stay its own (Keras re-creates the layers).
  LSTM given_layer(LSTMOptions(2));
  auto copy = Bidirectional(BidirectionalOptions(given_layer));
  EXPECT_NE(copy->forward_layer.get(), given_layer.ptr().get());
  EXPECT_EQ(copy->forward_layer->name(), "forward_lstm");
}

TEST(Bidirectional, ConfigRoundTripsWithKerasNamesAndACustomBackwardLayer) {
  Bidirectional layer(
      BidirectionalOptions(GRU(GRUOptions(3).return_sequences(true)))
          .backward_layer(GRU(GRUOptions(3).return_sequences(true).go_backwards(true).name("rev")).ptr())
          .merge_mode("mul")
          .name("bi"));
  const nlohmann::json c = layer->config();
  EXPECT_EQ(c.at("merge_mode"), "mul");
  EXPECT_EQ(c.at("layer").at("class_name"), "GRU");
  EXPECT_EQ(c.at("layer").at("config").at("name"), "forward_gru");
  EXPECT_EQ(c.at("backward_layer").at("config").at("name"), "rev");
  EXPECT_EQ(c.at("backward_layer").at("config").at("go_backwards"), true);
  auto back = layer_from_json(layer_to_json(*layer));
  EXPECT_EQ(back->config(), c);
  // Keras 3 writes None as null; tf.keras 2 leaves backward_layer out (derived from the layer).
  nlohmann::json keras2 = layer_to_json(*layer);
  keras2["config"].erase("backward_layer");
  keras2["config"]["layer"]["config"]["name"] = "gru";
  auto derived = std::dynamic_pointer_cast<BidirectionalImpl>(layer_from_json(keras2));
  ASSERT_TRUE(derived);
  EXPECT_EQ(derived->backward_layer->name(), "backward_gru");
  nlohmann::json none = layer_to_json(*layer);
  none["config"]["merge_mode"] = nullptr;
  expect_refused([&] { layer_from_json(none); }, "merge_mode None");
  nlohmann::json typo = layer_to_json(*layer);
  typo["config"]["merge"] = "sum";
  expect_refused([&] { layer_from_json(typo); }, "merge");
  nlohmann::json bad_inner = layer_to_json(*layer);
  bad_inner["config"]["layer"]["config"]["units"] = 0;
  expect_refused([&] { layer_from_json(bad_inner); }, "units");
}

TEST(Bidirectional, BadArgumentsAndInputsNameTheLayer) {
  expect_refused([] { (void)Bidirectional(BidirectionalOptions(Dense(DenseOptions(2)))); }, "recurrent layer");
  expect_refused([] { (void)Bidirectional(BidirectionalOptions(std::shared_ptr<Layer>())); }, "layer to wrap");
  expect_refused([] { Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(2))).merge_mode(std::nullopt)); },
                 "merge_mode None");
  expect_refused([] { Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(2))).merge_mode("max")); }, "max");
  expect_refused(
      [] { Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(2))).backward_layer(LSTM(LSTMOptions(2)).ptr())); },
      "go_backwards");
  expect_refused(
      [] {
        Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(2)))
                          .backward_layer(LSTM(LSTMOptions(2).go_backwards(true).return_sequences(true)).ptr()));
      },
      "return_sequences");
  expect_refused(
      [] {
        LSTM inner(LSTMOptions(2));
        inner->set_activity_regularizer(Layer::Regularizer{0.0, 0.1});
        (void)Bidirectional(BidirectionalOptions(inner));
      },
      "activity_regularizer");
  expect_refused(
      [] {
        Sequential m;
        m->add(Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(2))).input_shape(Shape{4, 3, 2})));
      },
      "sequence");
  expect_refused(
      [] {
        Sequential m;
        m->add(Bidirectional(
            BidirectionalOptions(LSTM(LSTMOptions(2))).weights({at::zeros({3, 8})}).input_shape(Shape{4, 3})));
      },
      "Keras weights");
}

TEST(Bidirectional, TheWrappedLayersRegularizersReachTheModelLoss) {
  LSTM inner(LSTMOptions(2));
  inner->set_regularizer("kernel", Layer::Regularizer{0.0, 0.5});
  Bidirectional layer(BidirectionalOptions(inner).input_shape(Shape{4, 3}));
  Sequential m;
  m->add(layer);
  const double want = 0.5 * (layer->forward_layer->kernel.square().sum().item<double>() +
                             layer->backward_layer->kernel.square().sum().item<double>());
  ASSERT_TRUE(m->regularization_loss().defined());
  EXPECT_NEAR(m->regularization_loss().item<double>(), want, 1e-5 * want);
}

}  // namespace bidirectional_test
