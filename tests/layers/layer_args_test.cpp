// Layer arguments listed once (layer_args.h): the exact Keras config of every built-in layer, the JSON
// forms the writer and reader share, a user layer registered with TORCHFIT_REGISTER_LAYER (required
// arguments, errors), the shipped seed_cnn.json, and Dropout/Activation options with input_shape.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

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
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;

namespace {

// A user layer with a required argument: y = x + offset.
struct OffsetOptions {
  explicit OffsetOptions(double offset) : offset_(offset) {}
  explicit OffsetOptions(FromConfig) : offset_(0.0) {}
  TORCH_ARG(double, offset);
  TORCH_ARG(bool, negate) = false;
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  TORCH_ARG(std::string, name) = "";

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("offset", offset());
    a("negate", negate());
  }
};

class OffsetImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Offset);

 public:
  explicit OffsetImpl(OffsetOptions o) : Layer(keras_class_name, o.name()), options(std::move(o)) {
    set_declared_input_shape(options.input_shape());
  }
  at::Tensor forward(const at::Tensor& x) override { return (options.negate() ? -x : x) + options.offset(); }
  Json config() const override { return base_config(options); }
  OffsetOptions options;

 protected:
  Shape build_impl(const Shape& in) override { return in; }
};
TORCH_MODULE(Offset);

TORCHFIT_REGISTER_LAYER(Offset);

// Every JSON form an argument can take.
struct FormsOptions {
  TORCH_ARG(bool, flag) = true;
  TORCH_ARG(int64_t, count) = 3;
  TORCH_ARG(double, ratio) = 0.5;
  TORCH_ARG(std::string, word) = "w";
  TORCH_ARG(Shape, dims) = Shape({1, 2});
  TORCH_ARG(torch::ExpandingArray<2>, window) = 2;
  TORCH_ARG(std::optional<int64_t>, maybe) = std::nullopt;
  TORCH_ARG(std::optional<std::vector<int64_t>>, steps) = std::vector<int64_t>{4, 5};

 public:
  template <typename Args>
  void args(Args& a) {
    a("flag", flag());
    a("count", count());
    a("ratio", ratio());
    a("word", word());
    a("dims", dims());
    a("window", window());
    a("maybe", maybe());
    a("steps", steps());
  }
};

}  // namespace

TEST(LayerArgs, EveryBuiltInWritesItsKerasConfigAndReadsItBack) {
  const std::vector<std::pair<std::shared_ptr<Layer>, std::string>> cases = {
      {Conv2D(Conv2DOptions(4, {3, 2})
                  .strides(2)
                  .padding("same")
                  .dilation_rate({1, 2})
                  .activation("relu")
                  .use_bias(false)
                  .name("c")
                  .input_shape(Shape{8, 8, 3}))
           .ptr(),
       R"({"activation":"relu","dilation_rate":[1,2],"filters":4,"input_shape":[8,8,3],"kernel_size":[3,2],)"
       R"("name":"c","padding":"same","strides":[2,2],"use_bias":false})"},
      {DepthwiseConv2D(DepthwiseConv2DOptions(3).depth_multiplier(2).strides({1, 2}).name("dw")).ptr(),
       R"({"activation":"linear","depth_multiplier":2,"dilation_rate":[1,1],"kernel_size":[3,3],"name":"dw",)"
       R"("padding":"valid","strides":[1,2],"use_bias":true})"},
      {Dense(DenseOptions(5).activation("softmax").name("d")).ptr(),
       R"({"activation":"softmax","name":"d","units":5,"use_bias":true})"},
      {MaxPooling2D(MaxPooling2DOptions(3).name("mp")).ptr(),
       R"({"name":"mp","padding":"valid","pool_size":[3,3],"strides":[3,3]})"},
      {AveragePooling2D(AveragePooling2DOptions({2, 3}).strides(std::vector<int64_t>{1}).padding("same")).ptr(),
       R"({"name":"","padding":"same","pool_size":[2,3],"strides":[1,1]})"},
      {GlobalAveragePooling2D(GlobalPooling2DOptions().name("g")).ptr(), R"({"keepdims":false,"name":"g"})"},
      {GlobalMaxPooling2D().ptr(), R"({"keepdims":false,"name":""})"},
      {Flatten(FlattenOptions().input_shape(Shape{2, 2, 1})).ptr(), R"({"input_shape":[2,2,1],"name":""})"},
      {Reshape(ReshapeOptions({-1, 4}).name("r")).ptr(), R"({"name":"r","target_shape":[-1,4]})"},
      {Dropout(DropoutOptions(0.25).input_shape(Shape{7}).name("drop")).ptr(),
       R"({"input_shape":[7],"name":"drop","rate":0.25})"},
      {BatchNormalization(BatchNormalizationOptions().momentum(0.9).center(false).name("bn")).ptr(),
       R"({"axis":-1,"center":false,"epsilon":0.001,"momentum":0.9,"name":"bn","scale":true})"},
      {LeakyReLU().ptr(), R"({"alpha":0.3,"name":""})"},
      {ELU(ELUOptions().alpha(0.5)).ptr(), R"({"alpha":0.5,"name":""})"},
      {Activation(ActivationOptions("gelu").input_shape(Shape{3}).name("a")).ptr(),
       R"({"activation":"gelu","input_shape":[3],"name":"a"})"},
  };
  std::set<std::string> covered;
  for (const auto& [layer, expected] : cases) {
    covered.insert(layer->class_name());
    EXPECT_EQ(layer->config().dump(), expected) << layer->class_name();
    const auto rebuilt = layer_from_json(layer_to_json(*layer));
    EXPECT_EQ(rebuilt->class_name(), layer->class_name());
    EXPECT_EQ(rebuilt->config().dump(), expected) << layer->class_name() << " read back";
  }
  EXPECT_EQ(covered.size(), 14u);  // every built-in class
}

TEST(LayerArgs, WriterAndReaderShareEveryJsonForm) {
  FormsOptions options;
  Json written;
  LayerArgWriter writer(written);
  options.args(writer);
  EXPECT_EQ(written.dump(),
            R"({"count":3,"dims":[1,2],"flag":true,"maybe":null,"ratio":0.5,"steps":[4,5],"window":[2,2],"word":"w"})");

  const Json config = {{"flag", false}, {"count", 7},  {"ratio", 2}, {"word", "x"},
                       {"dims", {3}},   {"window", 4}, {"maybe", 9}, {"steps", nullptr}};
  LayerConfigReader reader(config, "Forms");
  FormsOptions back;
  LayerArgReader args(reader);
  back.args(args);
  reader.finish();
  EXPECT_FALSE(back.flag());
  EXPECT_EQ(back.count(), 7);
  EXPECT_DOUBLE_EQ(back.ratio(), 2.0);  // an integer is a number
  EXPECT_EQ(back.word(), "x");
  EXPECT_EQ(back.dims(), Shape({3}));
  EXPECT_EQ((*back.window())[0], 4);  // an integer is a square window
  EXPECT_EQ((*back.window())[1], 4);
  ASSERT_TRUE(back.maybe().has_value());
  EXPECT_EQ(*back.maybe(), 9);
  ASSERT_TRUE(back.steps().has_value());
  EXPECT_EQ(*back.steps(), (std::vector<int64_t>{4, 5}));  // null keeps the default
}

TEST(LayerArgs, UserLayerRegisteredWithTheMacro) {
  const auto names = registered_layers();
  EXPECT_NE(std::find(names.begin(), names.end(), "Offset"), names.end());
  Sequential m;
  m->add(layer_from_json({{"class_name", "Offset"}, {"config", {{"offset", 1.5}, {"input_shape", {2}}}}}));
  EXPECT_EQ(m->layers()[0]->name(), "offset");
  EXPECT_TRUE(at::equal(m->forward(at::ones({1, 2})), at::full({1, 2}, 2.5f)));
  EXPECT_EQ(layer_to_json(*m->layers()[0]).dump(),
            R"({"class_name":"Offset","config":{"input_shape":[2],"name":"offset","negate":false,"offset":1.5}})");

  auto msg = torchfit::testing::layer_config_error({{"class_name", "Offset"}, {"config", {{"name", "o"}}}});
  EXPECT_NE(msg.find("layer 'o' (Offset): missing field 'offset'"), std::string::npos) << msg;
  msg =
      torchfit::testing::layer_config_error({{"class_name", "Offset"}, {"config", {{"offset", 1}, {"negate", "no"}}}});
  EXPECT_NE(msg.find("layer 'offset' (Offset): field 'negate' must be true or false, got \"no\""), std::string::npos)
      << msg;
  msg = torchfit::testing::layer_config_error({{"class_name", "Offset"}, {"config", {{"offset", 1}, {"ofset", 2}}}});
  EXPECT_NE(msg.find("unknown field 'ofset' (known: input_shape, name, negate, offset)"), std::string::npos) << msg;
  torchfit::testing::expect_layer_conformance(Offset(OffsetOptions(-2.0).negate(true)).ptr(),
                                              torchfit::testing::LayerConformance({3, 3, 2}, {3, 3, 2}));
}

TEST(LayerArgs, BuiltInErrorsNameTheLayerAndTheField) {
  auto msg = torchfit::testing::layer_config_error({{"class_name", "Activation"}, {"config", Json::object()}});
  EXPECT_NE(msg.find("layer 'activation' (Activation): missing field 'activation'"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Dropout"}, {"config", {{"name", "dr"}, {"rate", 0.1}, {"rates", 0.2}}}});
  EXPECT_NE(msg.find("layer 'dr' (Dropout): unknown field 'rates' (known: input_shape, name, rate)"), std::string::npos)
      << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "Dense"}, {"config", {{"name", "d"}, {"units", 2}, {"use_bias", 1}}}});
  EXPECT_NE(msg.find("layer 'd' (Dense): field 'use_bias' must be true or false, got 1"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "MaxPooling2D"}, {"config", {{"name", "p"}, {"strides", {2, "x"}}}}});
  EXPECT_NE(msg.find("layer 'p' (MaxPooling2D): field 'strides' must be a list of integers"), std::string::npos) << msg;
  msg = torchfit::testing::layer_config_error(
      {{"class_name", "MaxPooling2D"}, {"config", {{"name", "p"}, {"strides", {1, 2, 3}}}}});
  EXPECT_NE(msg.find("layer 'p' (MaxPooling2D): strides must be one value or a pair"), std::string::npos) << msg;
}

TEST(LayerArgs, ShippedSeedCnnJsonLoadsAndWritesTheSameModel) {
  std::ifstream in(std::filesystem::path(TORCHFIT_SOURCE_DIR) / "apps/train_cnn/seed_cnn.json");
  ASSERT_TRUE(in) << "apps/train_cnn/seed_cnn.json";
  const Json file = Json::parse(in);
  auto model = SequentialImpl::from_json(file);
  EXPECT_EQ(model->to_json(), file);
  // 896 + 18,496 + 42,467,840 + 32,832 + 520 (Conv2D 32, Conv2D 64, Dense 512, 64, 8).
  EXPECT_EQ(model->count_params(), 42520584);
}

TEST(LayerArgs, DropoutAndActivationTakeAnInputShape) {
  Sequential m;
  m->add(Activation(ActivationOptions("relu").input_shape(Shape{2, 1, 2})));
  m->add(Dropout(DropoutOptions(0.5)));
  EXPECT_EQ(m->layers()[0]->output_shape(), Shape({2, 1, 2}));
  m->eval();
  const auto x = at::tensor({-1.0f, 2.0f, 3.0f, -4.0f}).reshape({1, 2, 2, 1});  // (N, C, H, W)
  EXPECT_TRUE(at::equal(m->forward(x), at::tensor({0.0f, 2.0f, 3.0f, 0.0f}).reshape({1, 2, 2, 1})));
  auto again = SequentialImpl::from_json(Json::parse(m->to_json().dump()));
  ASSERT_TRUE(again->layers()[0]->declared_input_shape().has_value());
  EXPECT_EQ(*again->layers()[0]->declared_input_shape(), Shape({2, 1, 2}));

  Sequential d;
  d->add(Dropout(DropoutOptions(0.2).input_shape(Shape{6})));
  EXPECT_EQ(d->layers()[0]->output_shape(), Shape({6}));
  EXPECT_EQ(d->layers()[0]->config()["input_shape"], Json({6}));
}
