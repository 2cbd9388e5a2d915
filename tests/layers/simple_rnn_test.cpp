// SimpleRNN: the step loop and its gradients against a float64 NumPy reference written from Keras 3's
// SimpleRNNCell (return_sequences, go_backwards, a relu activation, no bias), conformance, Keras's weight
// layout and initializers, training-only dropout, and bad arguments refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/registry.h>
#include <torchfit/layers/simple_rnn.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/recurrent_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

SimpleRNN built_rnn(SimpleRNNOptions o) { return torchfit::testing::built_recurrent<SimpleRNN>(std::move(o)); }

void expect_refused(const std::function<void()>& make, const std::string& word) {
  torchfit::testing::expect_refused_naming(make, "SimpleRNN", word);
}

}  // namespace

TEST(SimpleRNN, MatchesKerasCellAndItsGradients) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const auto json = [](const at::Tensor& t) { return torchfit::testing::tensor_json(t.detach()); };
  struct Case {
    bool sequences, backwards, use_bias;
    std::string activation;
  };
  for (const Case& c : {Case{false, false, true, "tanh"}, Case{true, false, true, "tanh"},
                        Case{true, true, true, "tanh"}, Case{false, true, false, "relu"}}) {
    SCOPED_TRACE(c.activation + (c.sequences ? " sequences" : "") + (c.backwards ? " backwards" : ""));
    SimpleRNN layer = built_rnn(SimpleRNNOptions(3)
                                    .return_sequences(c.sequences)
                                    .go_backwards(c.backwards)
                                    .use_bias(c.use_bias)
                                    .activation(c.activation));
    at::manual_seed(5);
    const at::Tensor x = at::randn({2, 4, 3}).requires_grad_(true);
    const at::Tensor y = layer->forward(x);
    const at::Tensor grad_y = at::randn_like(y);
    (y * grad_y).sum().backward();
    const at::Tensor b = c.use_bias ? layer->bias : at::zeros({3});
    nlohmann::json req = {{"op", "simple_rnn"},
                          {"x", json(x)},
                          {"kernel", json(layer->kernel)},
                          {"recurrent_kernel", json(layer->recurrent_kernel)},
                          {"bias", json(b)},
                          {"activation", c.activation},
                          {"return_sequences", c.sequences},
                          {"go_backwards", c.backwards}};
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
    req["op"] = "simple_rnn_grad";
    req["grad_y"] = json(grad_y);
    std::vector<at::Tensor> grads = {x.grad().reshape(-1), layer->kernel.grad().reshape(-1),
                                     layer->recurrent_kernel.grad().reshape(-1)};
    grads.push_back(c.use_bias ? layer->bias.grad().reshape(-1) : at::Tensor());
    const at::Tensor ref = torchfit::testing::keras_reference(req);
    const at::Tensor got = at::cat(at::TensorList(grads.data(), c.use_bias ? 4 : 3));
    ASSERT_GE(ref.numel(), got.numel());
    EXPECT_TRUE(at::allclose(got, ref.reshape(-1).slice(0, 0, got.numel()).to(got.dtype()), 1e-3, 1e-4));
  }
}

TEST(SimpleRNN, Conforms) {
  expect_layer_conformance(SimpleRNN(SimpleRNNOptions(5)).ptr(), LayerConformance({4, 3}, {5}).trainable_params(45));
  expect_layer_conformance(SimpleRNN(SimpleRNNOptions(2).return_sequences(true).go_backwards(true)).ptr(),
                           LayerConformance({4, 3}, {4, 2}).trainable_params(12));
}

TEST(SimpleRNN, KerasLayoutAndInitializers) {
  at::manual_seed(1);
  SimpleRNN layer = SimpleRNN(SimpleRNNOptions(6).input_shape(Shape{5, 4}));
  Sequential m;
  m->add(layer);
  const auto w = layer->keras_weights();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].sizes(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(w[1].sizes(), (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(w[2].sizes(), (std::vector<int64_t>{6}));
  EXPECT_TRUE(at::allclose(at::matmul(w[1].t(), w[1]), at::eye(6), 1e-4, 1e-5)) << "orthogonal recurrent kernel";
  EXPECT_EQ(w[2].abs().max().item<double>(), 0.0);
  EXPECT_LE(w[0].abs().max().item<double>(), std::sqrt(6.0 / 10.0));
}

TEST(SimpleRNN, DropoutOnlyInTrainingWithOneMaskPerSequence) {
  SimpleRNN layer = built_rnn(SimpleRNNOptions(3).dropout(0.5).recurrent_dropout(0.3).return_sequences(true));
  const at::Tensor x = at::randn({2, 4, 3});
  layer->eval();
  const at::Tensor a = layer->forward(x);
  EXPECT_TRUE(at::equal(a, layer->forward(x))) << "no masks in inference";
  SimpleRNN plain = built_rnn(SimpleRNNOptions(3).return_sequences(true));
  EXPECT_TRUE(at::allclose(a, plain->forward(x)));
  layer->train();
  at::manual_seed(7);
  const at::Tensor t = layer->forward(x);
  EXPECT_FALSE(at::allclose(t, a));
}

TEST(SimpleRNN, BadInputAndArgumentsNameTheLayer) {
  expect_refused([] { SimpleRNN(SimpleRNNOptions(0)); }, "units");
  expect_refused([] { SimpleRNN(SimpleRNNOptions(2).return_state(true)); }, "return_state");
  expect_refused([] { SimpleRNN(SimpleRNNOptions(2).stateful(true)); }, "stateful");
  expect_refused([] { SimpleRNN(SimpleRNNOptions(2).dropout(1.0)); }, "dropout");
  expect_refused([] { SimpleRNN(SimpleRNNOptions(2).activation("nope")); }, "nope");
  expect_refused(
      [] {
        Sequential m;
        m->add(SimpleRNN(SimpleRNNOptions(2).input_shape(Shape{4, 3, 2})));
      },
      "sequence");
}

TEST(SimpleRNN, ConfigRoundTripsAndReadsKeras3) {
  SimpleRNN layer(SimpleRNNOptions(4).activation("relu").return_sequences(true).dropout(0.25));
  const nlohmann::json j = layer_to_json(*layer);
  EXPECT_EQ(layer_to_json(*layer_from_json(j)), j);
}
