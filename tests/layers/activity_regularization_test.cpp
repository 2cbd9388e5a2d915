// ActivityRegularization (keras.layers.ActivityRegularization) and any layer's activity_regularizer: the
// loss fit reports against the NumPy reference written from Keras 3 (the compiled loss + l1·Σ|a| + l2·Σa²
// over the batch), on hidden and output layers (the activated output), conformance, configs, bad input.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/activity_regularization.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include <torchfit/training/trainer.h>

#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;
using Json = nlohmann::json;

namespace {

// The loss of one train_step on (x, target) against the reference, with the weights before the step.
void expect_step_loss(Model model, const std::string& loss, bool softmax, const Json& activity) {
  at::manual_seed(11);
  const at::Tensor x = at::randn({5, 4});
  const at::Tensor target = loss == "mse" ? at::randn({5, 2}) : at::one_hot(at::arange(5) % 2, 2).to(at::kFloat);
  Json req = {{"op", "activity_loss"}, {"x", tensor_json(x)}, {"target", tensor_json(target)},
              {"loss", loss},          {"softmax", softmax},  {"activity", activity}};
  const auto w1 = model->get_layer("d1")->keras_weights(), w2 = model->get_layer("d2")->keras_weights();
  req["k1"] = tensor_json(w1[0]);
  req["b1"] = tensor_json(w1[1]);
  req["k2"] = tensor_json(w2[0]);
  req["b2"] = tensor_json(w2[1]);
  Trainer trainer(model, CompileOptions().loss(loss));
  const double got = trainer.train_step(x, target);
  const at::Tensor want = torchfit::testing::keras_reference(req);
  ASSERT_TRUE(want.defined());
  EXPECT_NEAR(got, want.item<double>(), 1e-5 * std::max(1.0, std::abs(want.item<double>())));
}

}  // namespace

TEST(ActivityRegularization, ConformanceAndIdentity) {
  torchfit::testing::expect_layer_conformance(
      ActivityRegularization(ActivityRegularizationOptions().l1(0.01).l2(0.02)).ptr(),
      torchfit::testing::LayerConformance({4, 5, 3}, {4, 5, 3}));
  torchfit::testing::expect_layer_conformance(ActivityRegularization().ptr(),
                                              torchfit::testing::LayerConformance({6}, {6}));
  const at::Tensor x = at::randn({2, 3});
  EXPECT_TRUE(at::equal(ActivityRegularization()->forward(x), x));
}

TEST(ActivityRegularization, FitLossAddsTheTermSummedOverTheBatch) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  Sequential m;
  m->add(Dense(DenseOptions(3).activation("relu").name("d1").input_shape(Shape{4})));
  m->add(ActivityRegularization(ActivityRegularizationOptions().l1(0.01).l2(0.02)));
  m->add(Dense(DenseOptions(2).name("d2")));
  expect_step_loss(m, "mse", false, Json::array({Json::array({"hidden", 0.01, 0.02})}));
}

// The step's gradients (one SGD step of learning rate 1: the weights' change) against the reference's
// central differences of the same loss, activity term included.
TEST(ActivityRegularization, StepGradientsMatchTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  Sequential m;
  m->add(Dense(DenseOptions(3).activation("relu").name("d1").input_shape(Shape{4})));
  m->add(ActivityRegularization(ActivityRegularizationOptions().l1(0.3).l2(0.2)));
  m->add(Dense(DenseOptions(2).name("d2")));
  at::manual_seed(11);
  const at::Tensor x = at::randn({5, 4}), target = at::randn({5, 2});
  const auto w1 = m->get_layer("d1")->keras_weights(), w2 = m->get_layer("d2")->keras_weights();
  Json req = {{"op", "activity_loss"},
              {"x", tensor_json(x)},
              {"target", tensor_json(target)},
              {"loss", "mse"},
              {"softmax", false},
              {"activity", {{"hidden", 0.3, 0.2}}},
              {"k1", tensor_json(w1[0])},
              {"b1", tensor_json(w1[1])},
              {"k2", tensor_json(w2[0])},
              {"b2", tensor_json(w2[1])},
              {"vjp", tensor_json(at::ones({1}))},
              {"wrt", {"k1", "b1", "k2", "b2"}}};
  Trainer trainer(m, CompileOptions().loss("mse").optimizer(OptimizerOptions().name("sgd").learning_rate(1.0)));
  trainer.train_step(x, target);
  const auto v1 = m->get_layer("d1")->keras_weights(), v2 = m->get_layer("d2")->keras_weights();
  const auto want = torchfit::testing::keras_reference_grads(req);
  ASSERT_EQ(want.size(), 5u);
  torchfit::testing::expect_matches_reference(w1[0] - v1[0], want.at("k1"));
  torchfit::testing::expect_matches_reference(w1[1] - v1[1], want.at("b1"));
  torchfit::testing::expect_matches_reference(w2[0] - v2[0], want.at("k2"));
  torchfit::testing::expect_matches_reference(w2[1] - v2[1], want.at("b2"));
}

// Keras 3's get_config: activity_regularizer on Dense layers (a hidden one and the softmax output: the term
// is taken on the probabilities, not the logits the loss reads), ActivityRegularization's l1/l2.
TEST(ActivityRegularization, Keras3ActivityRegularizersOnAnyLayer) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  auto regularizer = [](const std::string& cls, Json config) {
    return Json{
        {"module", "keras.regularizers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
  };
  auto layer = [](const std::string& cls, Json config) {
    config["dtype"] = "float32";
    config["trainable"] = true;
    return Json{{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
  };
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, 4}}, {"dtype", "float32"}, {"name", "in"}}}});
  layers.push_back(layer("Dense", {{"name", "d1"},
                                   {"units", 3},
                                   {"activation", "relu"},
                                   {"activity_regularizer", regularizer("L2", {{"l2", 0.03}})},
                                   {"kernel_regularizer", nullptr}}));
  layers.push_back(layer("ActivityRegularization", {{"name", "ar"}, {"l1", 0.01}, {"l2", 0.0}}));
  layers.push_back(layer("Dense", {{"name", "d2"},
                                   {"units", 2},
                                   {"activation", "softmax"},
                                   {"activity_regularizer", regularizer("L1", {{"l1", 0.1}})}}));
  const Json keras = {
      {"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", layers}}}};
  const Model m = model_from_json(keras);
  expect_step_loss(m, "categorical_crossentropy", true,
                   Json::array({Json::array({"hidden", 0.0, 0.03}), Json::array({"hidden", 0.01, 0.0}),
                                Json::array({"output", 0.1, 0.0})}));

  const Json d1 = layer_to_json(*m->get_layer("d1"));
  EXPECT_EQ(d1["config"]["activity_regularizer"], (Json{{"class_name", "L2"}, {"config", {{"l2", 0.03}}}}));
  EXPECT_EQ(layer_to_json(*layer_from_json(d1)), d1);
  const Json ar = layer_to_json(*m->get_layer("ar"));
  EXPECT_EQ(ar["config"], (Json{{"name", "ar"}, {"l1", 0.01}, {"l2", 0.0}}));
  EXPECT_EQ(layer_to_json(*layer_from_json(ar)), ar);
}

TEST(ActivityRegularization, BadInputNamesTheLayer) {
  using torchfit::testing::layer_config_error;
  EXPECT_NE(layer_config_error({{"class_name", "ActivityRegularization"}, {"config", {{"name", "a"}, {"l1", -0.5}}}})
                .find("layer 'a' (ActivityRegularization): l1 and l2 must be >= 0"),
            std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "ActivityRegularization"}, {"config", {{"name", "a"}, {"l2", "x"}}}})
                .find("layer 'a' (ActivityRegularization): field 'l2' must be a number"),
            std::string::npos);
  EXPECT_NE(layer_config_error(
                {{"class_name", "Dense"},
                 {"config",
                  {{"name", "d"}, {"units", 2}, {"activity_regularizer", {{"class_name", "OrthogonalRegularizer"}}}}}})
                .find("layer 'd' (Dense): activity_regularizer OrthogonalRegularizer is not supported"),
            std::string::npos);
  EXPECT_THROW(Dense(DenseOptions(2))->set_activity_regularizer(Layer::Regularizer{-1.0, 0.0}), ConfigError);
}
