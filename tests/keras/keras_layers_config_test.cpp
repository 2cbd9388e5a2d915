// Keras 3 configs of the normalization and regularization layers (GroupNormalization, UnitNormalization,
// RMSNormalization, GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D/2D, RepeatVector,
// Identity), a Dense on an image's channels, and the 1-D / 3-D pooling, padding, cropping, up-sampling and
// spatial dropout layers, read by model_from_json: Keras's arguments reach the layers
// (seed and the initializer/regularizer/constraint entries of Keras's get_config included), the shapes are
// Keras's, and torchfit's JSON reads back the same model.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/group_normalization.h>
#include <torchfit/layers/noise.h>
#include <torchfit/layers/repeat_vector.h>
#include <torchfit/layers/rms_normalization.h>
#include <torchfit/layers/unit_normalization.h>

using namespace torchfit;
using Json = nlohmann::json;

namespace keras_layers_config_test {

Json layer(const std::string& cls, Json config) {
  config["dtype"] = "float32";
  config["trainable"] = true;
  return {{"module", "keras.layers"}, {"class_name", cls}, {"config", config}, {"registered_name", nullptr}};
}

// What Keras 3's get_config writes beside the arguments.
Json with_weight_settings(Json config) {
  for (const char* w : {"beta", "gamma"}) {
    config[std::string(w) + "_initializer"] = {{"module", "keras.initializers"},
                                               {"class_name", std::string(w) == "beta" ? "Zeros" : "Ones"},
                                               {"config", Json::object()},
                                               {"registered_name", nullptr}};
    config[std::string(w) + "_regularizer"] = nullptr;
    config[std::string(w) + "_constraint"] = nullptr;
  }
  return config;
}

Json keras3_model() {
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, 4, 4, 6}}, {"dtype", "float32"}, {"name", "in"}}},
                    {"registered_name", nullptr}});
  layers.push_back(layer("GaussianNoise", {{"name", "noise"}, {"stddev", 0.1}, {"seed", 3}}));
  layers.push_back(
      layer("GroupNormalization",
            with_weight_settings(
                {{"name", "gn"}, {"groups", 3}, {"axis", -1}, {"epsilon", 0.001}, {"center", true}, {"scale", true}})));
  layers.push_back(
      layer("SpatialDropout2D", {{"name", "sd"}, {"rate", 0.2}, {"seed", nullptr}, {"data_format", "channels_last"}}));
  layers.push_back(layer("Dense", {{"name", "pointwise"}, {"units", 8}, {"activation", "gelu"}, {"use_bias", true}}));
  layers.push_back(layer("UnitNormalization", {{"name", "un"}, {"axis", {1, 2}}}));
  layers.push_back(layer("RMSNormalization", {{"name", "rms"}, {"axis", -1}, {"epsilon", 1e-5}}));
  layers.push_back(layer("GlobalAveragePooling2D", {{"name", "gap"}, {"data_format", "channels_last"}}));
  layers.push_back(layer("GaussianDropout", {{"name", "gd"}, {"rate", 0.1}, {"seed", nullptr}}));
  layers.push_back(layer("AlphaDropout", {{"name", "ad"}, {"rate", 0.1}, {"noise_shape", nullptr}, {"seed", nullptr}}));
  layers.push_back(layer("RepeatVector", {{"name", "rep"}, {"n", 3}}));
  layers.push_back(layer("SpatialDropout1D", {{"name", "sd1"}, {"rate", 0.3}, {"seed", nullptr}}));
  layers.push_back(layer("Identity", {{"name", "id"}}));
  return {{"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", layers}}}};
}

template <typename Impl>
std::shared_ptr<Impl> get(const Model& m, const std::string& name) {
  auto l = std::dynamic_pointer_cast<Impl>(m->get_layer(name));
  EXPECT_TRUE(l) << name;
  return l;
}

TEST(KerasLayersConfig, Keras3ArgumentsReachTheLayersAndShapesAreKeras) {
  const Model model = model_from_json(keras3_model());
  EXPECT_DOUBLE_EQ(get<GaussianNoiseImpl>(model, "noise")->options.stddev(), 0.1);
  const auto gn = get<GroupNormalizationImpl>(model, "gn");
  EXPECT_EQ(gn->group_count(), 3);
  EXPECT_EQ(gn->gamma.sizes(), at::IntArrayRef({6}));
  EXPECT_DOUBLE_EQ(get<SpatialDropout2DImpl>(model, "sd")->options.rate(), 0.2);
  EXPECT_EQ(model->get_layer("pointwise")->output_shape(), (Shape{4, 4, 8}));  // Dense over the channels
  EXPECT_EQ(get<UnitNormalizationImpl>(model, "un")->options.axis().axes, (std::vector<int64_t>{1, 2}));
  const auto rms = get<RMSNormalizationImpl>(model, "rms");
  EXPECT_DOUBLE_EQ(rms->options.epsilon(), 1e-5);
  EXPECT_EQ(rms->scale.sizes(), at::IntArrayRef({8}));
  EXPECT_DOUBLE_EQ(get<AlphaDropoutImpl>(model, "ad")->options.rate(), 0.1);
  EXPECT_EQ(model->get_layer("rep")->output_shape(), (Shape{3, 8}));
  EXPECT_EQ(model->output_shape(), (Shape{3, 8}));
  EXPECT_EQ(model_from_json(model->to_json())->to_json(), model->to_json());
}

TEST(KerasLayersConfig, BadArgumentsNameTheLayer) {
  Json json = keras3_model();
  json["config"]["layers"][2]["config"]["groups"] = 4;  // 6 channels
  try {
    model_from_json(json);
    FAIL() << "groups 4 on 6 channels accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("('gn', GroupNormalization): groups 4 must divide the 6 channels"),
              std::string::npos)
        << e.what();
  }
  json = keras3_model();
  json["config"]["layers"][3]["config"]["data_format"] = "channels_first";
  EXPECT_THROW(model_from_json(json), ConfigError);
  json = keras3_model();
  json["config"]["layers"][8]["config"]["rate"] = 1.0;
  EXPECT_THROW(model_from_json(json), ConfigError);
}

// Keras 3 configs of the 1-D and 3-D pooling, padding, cropping, up-sampling and spatial dropout layers (as
// Keras 3's get_config writes them: tuples as lists, data_format) read by model_from_json: the arguments reach
// the layers, the shapes are Keras's, torchfit's JSON reads back the same model.
Json input_layer(Json batch_shape) {
  return {{"module", "keras.layers"},
          {"class_name", "InputLayer"},
          {"config", {{"batch_shape", std::move(batch_shape)}, {"dtype", "float32"}, {"name", "in"}}},
          {"registered_name", nullptr}};
}

Json sequential(Json layers) {
  return {
      {"module", "keras"}, {"class_name", "Sequential"}, {"config", {{"name", "m"}, {"layers", std::move(layers)}}}};
}

Json keras3_sequence_model() {
  const Json cl = "channels_last";
  Json layers = Json::array({input_layer({nullptr, 9, 3})});
  layers.push_back(
      layer("MaxPooling1D",
            {{"name", "mp1"}, {"pool_size", {2}}, {"strides", {2}}, {"padding", "same"}, {"data_format", cl}}));
  layers.push_back(layer("ZeroPadding1D", {{"name", "zp1"}, {"padding", {1, 2}}, {"data_format", cl}}));
  layers.push_back(layer("Cropping1D", {{"name", "cr1"}, {"cropping", {1, 1}}}));
  layers.push_back(layer("UpSampling1D", {{"name", "up1"}, {"size", 2}}));
  layers.push_back(
      layer("AveragePooling1D",
            {{"name", "ap1"}, {"pool_size", {3}}, {"strides", {3}}, {"padding", "valid"}, {"data_format", cl}}));
  return sequential(layers);
}

Json keras3_volume_model() {
  const Json cl = "channels_last";
  Json layers = Json::array({input_layer({nullptr, 4, 5, 6, 2})});
  layers.push_back(
      layer("ZeroPadding3D", {{"name", "zp3"}, {"padding", {{1, 1}, {0, 1}, {2, 0}}}, {"data_format", cl}}));
  layers.push_back(layer(
      "MaxPooling3D",
      {{"name", "mp3"}, {"pool_size", {2, 2, 2}}, {"strides", {2, 2, 2}}, {"padding", "valid"}, {"data_format", cl}}));
  layers.push_back(layer("UpSampling3D", {{"name", "up3"}, {"size", {2, 2, 2}}, {"data_format", cl}}));
  layers.push_back(layer("Cropping3D", {{"name", "cr3"}, {"cropping", {{1, 1}, {1, 1}, {1, 1}}}, {"data_format", cl}}));
  layers.push_back(layer(
      "AveragePooling3D",
      {{"name", "ap3"}, {"pool_size", {3, 3, 3}}, {"strides", {1, 1, 1}}, {"padding", "same"}, {"data_format", cl}}));
  layers.push_back(layer("SpatialDropout3D", {{"name", "sd3"}, {"rate", 0.2}, {"seed", nullptr}, {"data_format", cl}}));
  layers.push_back(layer("GlobalMaxPooling3D", {{"name", "gmp3"}, {"keepdims", true}, {"data_format", cl}}));
  layers.push_back(layer("GlobalAveragePooling3D", {{"name", "gap3"}, {"keepdims", false}, {"data_format", cl}}));
  return sequential(layers);
}

TEST(KerasLayersConfig, Keras3SequenceAndVolumeLayersReachTheLayersWithKerasShapes) {
  const Model seq = model_from_json(keras3_sequence_model());
  EXPECT_EQ(seq->get_layer("mp1")->output_shape(), (Shape{5, 3}));
  EXPECT_EQ(seq->get_layer("zp1")->output_shape(), (Shape{8, 3}));
  EXPECT_EQ(seq->get_layer("cr1")->output_shape(), (Shape{6, 3}));
  EXPECT_EQ(seq->get_layer("up1")->output_shape(), (Shape{12, 3}));
  EXPECT_EQ(seq->output_shape(), (Shape{4, 3}));
  EXPECT_EQ(model_from_json(seq->to_json())->to_json(), seq->to_json());
  const Model vol = model_from_json(keras3_volume_model());
  EXPECT_EQ(vol->get_layer("zp3")->output_shape(), (Shape{6, 6, 8, 2}));
  EXPECT_EQ(vol->get_layer("mp3")->output_shape(), (Shape{3, 3, 4, 2}));
  EXPECT_EQ(vol->get_layer("up3")->output_shape(), (Shape{6, 6, 8, 2}));
  EXPECT_EQ(vol->get_layer("cr3")->output_shape(), (Shape{4, 4, 6, 2}));
  EXPECT_EQ(vol->get_layer("ap3")->output_shape(), (Shape{4, 4, 6, 2}));
  EXPECT_DOUBLE_EQ(get<SpatialDropout3DImpl>(vol, "sd3")->options.rate(), 0.2);
  EXPECT_EQ(vol->get_layer("gmp3")->output_shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(vol->output_shape(), (Shape{2}));
  EXPECT_EQ(model_from_json(vol->to_json())->to_json(), vol->to_json());
}

TEST(KerasLayersConfig, Keras3SequenceAndVolumeLayersRefuseChannelsFirstNamingTheLayer) {
  for (size_t i = 1; i < 9; ++i) {
    Json json = keras3_volume_model();
    Json& config = json["config"]["layers"][i]["config"];
    if (!config.contains("data_format")) continue;
    config["data_format"] = "channels_first";
    try {
      model_from_json(json);
      ADD_FAILURE() << config["name"] << ": channels_first accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(config["name"].get<std::string>()), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("data_format"), std::string::npos) << e.what();
    }
  }
  Json json = keras3_sequence_model();
  json["config"]["layers"][1]["config"]["pool_size"] = {2, 2};
  EXPECT_THROW(model_from_json(json), ConfigError);
}

}  // namespace keras_layers_config_test
