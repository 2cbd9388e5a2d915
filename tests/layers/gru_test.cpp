// GRU: the fused at::gru path (reset_after) and the step loop (reset_after false, another activation), each
// against a float64 NumPy reference written from Keras 3's GRUCell (return_sequences, go_backwards, no bias),
// their input and weight gradients, conformance, Keras's weight layout (bias (2, 3·units) or (3·units)),
// training-only dropout, and bad arguments, inputs and weights refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/gru.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"
#include "support/recurrent_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

// A named namespace: the tests compile in unity batches.
namespace gru_test {
namespace {

GRU built_gru(GRUOptions o) { return torchfit::testing::built_recurrent<GRU>(std::move(o)); }

void expect_refused(const std::function<void()>& make, const std::string& word) {
  torchfit::testing::expect_refused_naming(make, "GRU", word);
}

nlohmann::json gru_request(const GRUOptions& o) {
  return {{"op", "gru"},
          {"activation", o.activation()},
          {"recurrent_activation", o.recurrent_activation()},
          {"reset_after", o.reset_after()},
          {"return_sequences", o.return_sequences()},
          {"go_backwards", o.go_backwards()}};
}

struct Case {
  GRUOptions options;
  bool fused;
};

std::vector<Case> cases() {
  return {{GRUOptions(3), true},
          {GRUOptions(3).return_sequences(true).go_backwards(true), true},
          {GRUOptions(2).use_bias(false).return_sequences(true), true},
          {GRUOptions(3).reset_after(false).return_sequences(true), false},
          {GRUOptions(3).reset_after(false).use_bias(false).go_backwards(true), false},
          {GRUOptions(3).activation("relu").return_sequences(true), false},
          {GRUOptions(3).recurrent_activation("linear"), false}};
}

}  // namespace

TEST(GRU, FusedAndLoopPathsMatchKerasCellBothResetConventions) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_recurrent_cases_match_reference<GRU>(cases(), gru_request);
}

TEST(GRU, InputAndWeightGradientsMatchKerasCellOnBothPaths) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  torchfit::testing::expect_recurrent_case_gradients_match_reference<GRU>(cases(), gru_request);
}

TEST(GRU, Conforms) {
  // 3·u·(C + u) + 2·3·u with reset_after, + 3·u without.
  expect_layer_conformance(GRU(GRUOptions(5)).ptr(), LayerConformance({4, 3}, {5}).trainable_params(150));
  expect_layer_conformance(GRU(GRUOptions(2).return_sequences(true).reset_after(false)).ptr(),
                           LayerConformance({4, 3}, {4, 2}).trainable_params(36));
}

TEST(GRU, KerasLayoutAndInitializers) {
  at::manual_seed(1);
  GRU layer = GRU(GRUOptions(6).input_shape(Shape{5, 4}));
  Sequential m;
  m->add(layer);
  const auto w = layer->keras_weights();
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].sizes(), (std::vector<int64_t>{4, 18}));
  EXPECT_EQ(w[1].sizes(), (std::vector<int64_t>{6, 18}));
  EXPECT_EQ(w[2].sizes(), (std::vector<int64_t>{2, 18}));
  EXPECT_TRUE(at::allclose(at::matmul(w[1], w[1].t()), at::eye(6), 1e-4, 1e-5)) << "orthogonal recurrent kernel";
  EXPECT_EQ(w[2].abs().max().item<double>(), 0.0);
  EXPECT_LE(w[0].abs().max().item<double>(), std::sqrt(6.0 / 22.0));
  GRU before = GRU(GRUOptions(6).reset_after(false).input_shape(Shape{5, 4}));
  Sequential m2;
  m2->add(before);
  EXPECT_EQ(before->keras_weights()[2].sizes(), (std::vector<int64_t>{18}));
}

TEST(GRU, DropoutOnlyInTrainingAndRecurrentDropoutRunsTheLoop) {
  GRU layer = built_gru(GRUOptions(3).dropout(0.5).recurrent_dropout(0.3).return_sequences(true));
  const at::Tensor x = at::randn({2, 4, 3});
  layer->eval();
  const at::Tensor a = layer->forward(x);
  EXPECT_TRUE(at::equal(a, layer->forward(x))) << "no masks in inference";
  GRU plain = built_gru(GRUOptions(3).return_sequences(true));
  EXPECT_TRUE(at::allclose(a, plain->forward(x)));
  EXPECT_FALSE(layer->fused(true)) << "a recurrent mask needs the step loop";
  layer->train();
  at::manual_seed(7);
  EXPECT_FALSE(at::allclose(layer->forward(x), a));
}

TEST(GRU, BadInputArgumentsAndWeightsNameTheLayer) {
  expect_refused([] { GRU(GRUOptions(-1)); }, "units");
  expect_refused([] { GRU(GRUOptions(2).stateful(true)); }, "stateful");
  expect_refused([] { GRU(GRUOptions(2).activation("nope")); }, "nope");
  expect_refused([] { GRU(GRUOptions(2).recurrent_activation("nope2")); }, "nope2");
  expect_refused([] { GRU(GRUOptions(2).recurrent_dropout(-0.1)); }, "recurrent_dropout");
  expect_refused(
      [] {
        Sequential m;
        m->add(GRU(GRUOptions(2).input_shape(Shape{4})));
      },
      "sequence");
  GRU layer = built_gru(GRUOptions(2));
  expect_refused([&] { layer->set_keras_weights({at::zeros({3, 6}), at::zeros({2, 6}), at::zeros({6})}); }, "bias");
  expect_refused(
      [&] {
        layer->set_keras_weights({at::zeros({3, 8}), at::zeros({2, 6}), at::zeros({2, 6})});
      },
      "kernel");
}

TEST(GRU, ConfigRoundTrips) {
  GRU layer(GRUOptions(4).reset_after(false).go_backwards(true).recurrent_dropout(0.25));
  const nlohmann::json j = layer_to_json(*layer);
  EXPECT_EQ(j["config"]["reset_after"], false);
  EXPECT_EQ(layer_to_json(*layer_from_json(j)), j);
}

}  // namespace gru_test
