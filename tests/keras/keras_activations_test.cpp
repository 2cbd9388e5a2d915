// Keras configs naming the activations (as strings, and as Keras 3 / tf.keras 2.13+ serialized functions)
// and the PReLU and ThresholdedReLU layers, read by model_from_json (keras/keras_json.h): the names and
// arguments reach the layers, the imported PReLU takes Keras-order alpha weights; unsupported forms are
// refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/activation.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/conv2d.h>

using namespace torchfit;
using Json = nlohmann::json;

namespace {

// Keras 3's serialized built-in activation (keras.saving.serialize_keras_object of keras.activations.<name>).
Json keras3_function(const std::string& name) {
  return {{"module", "keras.activations"}, {"class_name", "function"}, {"config", name}, {"registered_name", name}};
}

Json keras3_layer(const std::string& cls, Json config) {
  config["dtype"] = {{"module", "keras"},
                     {"class_name", "DTypePolicy"},
                     {"config", {{"name", "float32"}}},
                     {"registered_name", nullptr}};
  config["trainable"] = true;
  return {{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
}

// A Keras 3 Sequential on (4, 4, 3): Conv2D with a serialized hard_silu, Activation("swish") as a string and
// Activation(log_softmax) serialized, PReLU shared over H and W (an int as Keras also takes), ThresholdedReLU.
Json keras3_sequential(const Json& conv_activation) {
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, 4, 4, 3}}, {"dtype", "float32"}, {"name", "in"}}},
                    {"registered_name", nullptr}});
  layers.push_back(keras3_layer("Conv2D", {{"name", "conv"},
                                           {"filters", 2},
                                           {"kernel_size", {1, 1}},
                                           {"activation", conv_activation},
                                           {"use_bias", true},
                                           {"kernel_initializer", {{"class_name", "GlorotUniform"}, {"config", {}}}},
                                           {"kernel_regularizer", nullptr}}));
  layers.push_back(keras3_layer("Activation", {{"name", "sw"}, {"activation", "swish"}}));
  layers.push_back(keras3_layer("Activation", {{"name", "ls"}, {"activation", keras3_function("log_softmax")}}));
  layers.push_back(keras3_layer("PReLU", {{"name", "pr"},
                                          {"alpha_initializer", {{"class_name", "Zeros"}, {"config", {}}}},
                                          {"alpha_regularizer", nullptr},
                                          {"alpha_constraint", nullptr},
                                          {"shared_axes", {1, 2}}}));
  layers.push_back(keras3_layer("PReLU", {{"name", "pr_w"}, {"shared_axes", 3}}));
  layers.push_back(keras3_layer("ThresholdedReLU", {{"name", "th"}, {"theta", 0.5}}));
  return {{"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "acts"}, {"layers", layers}}}};
}

std::string error_of(const Json& json) {
  try {
    model_from_json(json);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(KerasActivations, NamesInBothFormsAndTheNewLayersAreRead) {
  Model model = model_from_json(keras3_sequential(keras3_function("hard_silu")));
  const auto conv = std::dynamic_pointer_cast<Conv2DImpl>(model->get_layer("conv"));
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->options.activation(), "hard_silu");
  EXPECT_EQ(std::dynamic_pointer_cast<ActivationImpl>(model->get_layer("sw"))->options.activation(), "swish");
  EXPECT_EQ(std::dynamic_pointer_cast<ActivationImpl>(model->get_layer("ls"))->options.activation(), "log_softmax");
  const auto pr = std::dynamic_pointer_cast<PReLUImpl>(model->get_layer("pr"));
  ASSERT_TRUE(pr);
  EXPECT_EQ(pr->options.shared_axes(), (Shape{1, 2}));
  EXPECT_EQ(pr->alpha.sizes(), at::IntArrayRef({2, 1, 1}));  // torchfit's (C, H, W)
  // The Keras weight is (H, W, C) with the shared axes 1: one alpha per channel.
  EXPECT_EQ(pr->keras_weights().at(0).sizes(), at::IntArrayRef({1, 1, 2}));
  const auto pr_w = std::dynamic_pointer_cast<PReLUImpl>(model->get_layer("pr_w"));
  EXPECT_EQ(pr_w->options.shared_axes(), (Shape{3}));
  EXPECT_EQ(pr_w->keras_weights().at(0).sizes(), at::IntArrayRef({4, 4, 1}));
  EXPECT_DOUBLE_EQ(std::dynamic_pointer_cast<ThresholdedReLUImpl>(model->get_layer("th"))->options.theta(), 0.5);
  // Keras-order alpha in: channel c of every pixel gets alpha[0, 0, c].
  pr->set_keras_weights({at::tensor({0.5f, -2.0f}).reshape({1, 1, 2})});
  const at::Tensor y = pr->forward(at::full({1, 2, 4, 4}, -1.0f));
  EXPECT_TRUE(at::equal(y[0][0], at::full({4, 4}, -0.5f))) << y;
  EXPECT_TRUE(at::equal(y[0][1], at::full({4, 4}, 2.0f))) << y;
  // And it writes them back as torchfit's JSON, read again to the same layers.
  EXPECT_EQ(model_from_json(model->to_json())->to_json(), model->to_json());
}

TEST(KerasActivations, UnsupportedFormsAreRefusedNamingTheLayer) {
  Json custom = keras3_function("my_act");
  custom["module"] = "my_package.activations_ext";
  EXPECT_NE(error_of(keras3_sequential(custom)).find("('conv', Conv2D): activation {"), std::string::npos)
      << error_of(keras3_sequential(custom));
  const Json as_layer = {{"class_name", "LeakyReLU"}, {"config", {{"negative_slope", 0.3}}}};
  EXPECT_NE(error_of(keras3_sequential(as_layer)).find("('conv', Conv2D): activation"), std::string::npos);
  // An unknown name is the layer's own error, with the known names.
  const std::string unknown = error_of(keras3_sequential("hard_tanh"));
  EXPECT_NE(unknown.find("unknown activation 'hard_tanh' (known: "), std::string::npos) << unknown;
  Json json = keras3_sequential("relu");
  json["config"]["layers"][6]["config"]["theta"] = nullptr;
  EXPECT_NE(error_of(json).find("('th', ThresholdedReLU): theta must be a number >= 0, got null"), std::string::npos)
      << error_of(json);
  json = keras3_sequential("relu");
  json["config"]["layers"][4]["config"]["shared_axes"] = {0};
  EXPECT_NE(error_of(json).find("PReLU): shared_axes (0): 0 is not an axis"), std::string::npos) << error_of(json);
}
