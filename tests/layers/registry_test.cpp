// Layer registry and model JSON: every built-in registered, a model using all of them round-trips through
// to_json/from_json with identical outputs after copying weights, user registration, and the errors for
// unknown classes, bad fields, unknown fields and missing fields.
#include <gtest/gtest.h>

#include <sstream>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/reshape.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;

namespace {

Sequential every_layer_model() {
  Sequential m;
  m->add(Conv2D(Conv2DOptions(4, 3).padding("same").strides(2).input_shape(Shape{12, 12, 3})));
  m->add(BatchNormalization());
  m->add(LeakyReLU());
  m->add(DepthwiseConv2D(DepthwiseConv2DOptions(3).depth_multiplier(2).padding("same").activation("elu")));
  m->add(MaxPooling2D());
  m->add(AveragePooling2D(AveragePooling2DOptions(2).padding("same")));
  m->add(Conv2D(Conv2DOptions(6, 2).dilation_rate(2).padding("same").activation("gelu")));
  m->add(Reshape(ReshapeOptions({-1})));
  m->add(Reshape(ReshapeOptions({2, 2, 6})));
  m->add(GlobalMaxPooling2D());
  m->add(Reshape(ReshapeOptions({1, 2, 3})));
  m->add(GlobalAveragePooling2D());
  m->add(Dense(DenseOptions(5)));
  m->add(ELU());
  m->add(Dropout(DropoutOptions(0.25)));
  m->add(Activation("tanh"));
  m->add(Flatten());
  m->add(Dense(DenseOptions(3).activation("softmax")));
  return m;
}

}  // namespace

TEST(Registry, EveryBuiltInIsRegistered) {
  const auto names = registered_layers();
  for (const char* cls :
       {"Activation", "AveragePooling2D", "BatchNormalization", "Conv2D", "Dense", "DepthwiseConv2D", "Dropout", "ELU",
        "Flatten", "GlobalAveragePooling2D", "GlobalMaxPooling2D", "LeakyReLU", "MaxPooling2D", "Reshape"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), cls), names.end()) << cls;
  }
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Registry, ModelWithEveryLayerRoundTripsWithIdenticalOutputs) {
  at::manual_seed(0);
  auto model = every_layer_model();
  // Move BN's statistics away from their initial values so that the copy is visible.
  model->train();
  model->forward(at::randn({4, 3, 12, 12}));
  const Json json = model->to_json();
  EXPECT_EQ(json["format_version"], kModelFormatVersion);
  auto rebuilt = SequentialImpl::from_json(Json::parse(json.dump()));  // through text, as a file would
  EXPECT_EQ(rebuilt->to_json(), json);
  EXPECT_EQ(rebuilt->summary(), model->summary());
  EXPECT_EQ(rebuilt->count_params(), model->count_params());
  EXPECT_EQ(model->non_trainable_params(), 8);  // BN moving mean/variance of 4 channels

  std::stringstream stream;
  torch::serialize::OutputArchive out;
  model->save(out);
  out.save_to(stream);
  torch::serialize::InputArchive in;
  in.load_from(stream);
  rebuilt->load(in);
  model->eval();
  rebuilt->eval();
  auto x = at::randn({2, 3, 12, 12});
  EXPECT_TRUE(at::equal(rebuilt->forward(x), model->forward(x)));
}

TEST(Registry, UnknownClassListsTheKnownOnes) {
  const auto msg = torchfit::testing::layer_config_error({{"class_name", "ConvLSTM2D"}, {"config", Json::object()}});
  EXPECT_NE(msg.find("unknown layer class 'ConvLSTM2D'"), std::string::npos) << msg;
  for (const char* cls : {"BatchNormalization", "Dense", "Reshape"}) EXPECT_NE(msg.find(cls), std::string::npos) << msg;
  // A Keras class torchfit does not build says what to do instead; another name only lists the known ones.
  EXPECT_NE(torchfit::testing::layer_config_error({{"class_name", "TFOpLambda"}, {"config", Json::object()}})
                .find("holds Python code or TensorFlow operations, which torchfit cannot run: write it as a C++ layer"),
            std::string::npos);
  EXPECT_NE(torchfit::testing::layer_config_error({{"class_name", "TextVectorization"}, {"config", Json::object()}})
                .find("torchfit has no TextVectorization layer yet: preprocess with ImageDataGenerator"),
            std::string::npos);
  EXPECT_NE(torchfit::testing::layer_config_error({{"class_name", "Swishy"}, {"config", Json::object()}})
                .find("unknown layer class 'Swishy' (known: "),
            std::string::npos);
  // Inside a model JSON as well.
  Json model = {{"format_version", 1},
                {"class_name", "Sequential"},
                {"config", {{"name", "m"}, {"layers", {{{"class_name", "Swishy"}, {"config", Json::object()}}}}}}};
  try {
    SequentialImpl::from_json(model);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("Swishy"), std::string::npos) << e.what();
  }
}

TEST(Registry, BadFieldsNameTheLayerAndTheField) {
  auto msg =
      torchfit::testing::layer_config_error({{"class_name", "Dense"}, {"config", {{"name", "d9"}, {"units", "many"}}}});
  EXPECT_NE(msg.find("layer 'd9' (Dense): field 'units' must be an integer, got \"many\""), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error({{"class_name", "Dense"}, {"config", {{"name", "d9"}, {"units", 2.5}}}});
  EXPECT_NE(msg.find("field 'units' must be an integer"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error({{"class_name", "Dense"}, {"config", {{"name", "head"}}}});
  EXPECT_NE(msg.find("layer 'head' (Dense): missing field 'units'"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Dense"}, {"config", {{"name", "head"}, {"units", 3}, {"unit", 3}}}});
  EXPECT_NE(msg.find("unknown field 'unit'"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Conv2D"}, {"config", {{"name", "c"}, {"filters", 4}, {"kernel_size", {3, 3, 3}}}}});
  EXPECT_NE(msg.find("layer 'c' (Conv2D): field 'kernel_size' must be an integer or a pair"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "BatchNormalization"}, {"config", {{"name", "bn"}, {"momentum", 1.5}}}});
  EXPECT_NE(msg.find("'bn' (BatchNormalization): momentum must be in [0, 1)"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error({{"class_name", "BatchNormalization"}, {"config", {{"center", "yes"}}}});
  EXPECT_NE(msg.find("'batch_normalization' (BatchNormalization): field 'center' must be true or false"),
            std::string::npos)
      << msg;
  msg =
      torchfit::testing::layer_config_error({{"class_name", "Dropout"}, {"config", {{"name", "drop"}, {"rate", 1.5}}}});
  EXPECT_NE(msg.find("'drop' (Dropout): rate must be in [0, 1)"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Reshape"}, {"config", {{"name", "r"}, {"target_shape", {2, "x"}}}}});
  EXPECT_NE(msg.find("'r' (Reshape): field 'target_shape' must be a list of integers"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Conv2D"},
       {"config", {{"name", "c"}, {"filters", 4}, {"kernel_size", 3}, {"input_shape", "big"}}}});
  EXPECT_NE(msg.find("field 'input_shape' must be a list of integers"), std::string::npos) << msg;
}

namespace {
// A minimal user layer: y = factor · x.
class ScaleImpl : public Layer {
 public:
  explicit ScaleImpl(double factor, std::string name = "") : Layer("Scale", std::move(name)), factor_(factor) {}
  at::Tensor forward(const at::Tensor& x) override { return x * factor_; }
  Json config() const override {
    auto c = base_config();
    c["factor"] = factor_;
    return c;
  }

 protected:
  Shape build_impl(const Shape& in) override { return in; }

 private:
  double factor_;
};
}  // namespace

TEST(Registry, UserLayerRegistrationAndConformance) {
  register_layer("Scale", [](const Json& c) -> std::shared_ptr<Layer> {
    LayerConfigReader r(c, "Scale");
    auto l = std::make_shared<ScaleImpl>(r.required<double>("factor"), r.name());
    r.finish();
    return l;
  });
  const auto names = registered_layers();
  EXPECT_NE(std::find(names.begin(), names.end(), "Scale"), names.end());
  torchfit::testing::expect_layer_conformance(std::make_shared<ScaleImpl>(2.0),
                                              torchfit::testing::LayerConformance({3}, {3}));
  Sequential m;
  m->add(layer_from_json(
      {{"class_name", "Scale"}, {"config", {{"name", "triple"}, {"factor", 3.0}, {"input_shape", {2}}}}}));
  EXPECT_EQ(m->layers()[0]->name(), "triple");
  EXPECT_TRUE(at::equal(m->forward(at::ones({1, 2})), at::full({1, 2}, 3.0f)));
  const auto msg = torchfit::testing::layer_config_error(
      {{"class_name", "Scale"}, {"config", {{"name", "s"}, {"factor", 2}, {"bias", 1}}}});
  EXPECT_NE(msg.find("layer 's' (Scale): unknown field 'bias' (known: factor"), std::string::npos) << msg;
}

TEST(Registry, UnknownClassAndBadField) {
  try {
    layer_from_json({{"class_name", "ConvLSTM2D"}, {"config", nlohmann::json::object()}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("ConvLSTM2D"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("Dense"), std::string::npos);  // lists the known ones
  }
  try {
    layer_from_json({{"class_name", "Dense"}, {"config", {{"name", "d9"}, {"units", "many"}}}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("d9"), std::string::npos) << e.what();
  }
}
