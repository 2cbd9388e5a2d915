// The Layer base: the Keras class name written once (TORCHFIT_LAYER_CLASS) and the names made from it;
// the family bases' chained setters keep the layer's own options type.
#include <gtest/gtest.h>

#include <type_traits>

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
#include <torchfit/layers/layer.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/registry.h>
#include <torchfit/layers/reshape.h>
#include <torchfit/layers/resizing.h>
#include <torchfit/layers/up_sampling1d3d.h>

using namespace torchfit;

TEST(Naming, KerasSnakeCase) {
  EXPECT_EQ(keras_snake_case("Conv2D"), "conv2d");
  EXPECT_EQ(keras_snake_case("MaxPooling2D"), "max_pooling2d");
  EXPECT_EQ(keras_snake_case("BatchNormalization"), "batch_normalization");
  EXPECT_EQ(keras_snake_case("GlobalAveragePooling2D"), "global_average_pooling2d");
}

TEST(LayerClass, EveryBuiltInCarriesItsKerasClassNameAndIsRegisteredUnderIt) {
  const std::vector<std::pair<std::shared_ptr<Layer>, std::string>> layers = {
      {Activation(ActivationOptions("relu")).ptr(), "Activation"},
      {AveragePooling2D().ptr(), "AveragePooling2D"},
      {BatchNormalization().ptr(), "BatchNormalization"},
      {Conv2D(Conv2DOptions(2, 3)).ptr(), "Conv2D"},
      {Dense(DenseOptions(2)).ptr(), "Dense"},
      {DepthwiseConv2D(DepthwiseConv2DOptions(3)).ptr(), "DepthwiseConv2D"},
      {Dropout(DropoutOptions(0.5)).ptr(), "Dropout"},
      {ELU().ptr(), "ELU"},
      {Flatten().ptr(), "Flatten"},
      {GlobalAveragePooling2D().ptr(), "GlobalAveragePooling2D"},
      {GlobalMaxPooling2D().ptr(), "GlobalMaxPooling2D"},
      {LeakyReLU().ptr(), "LeakyReLU"},
      {MaxPooling2D().ptr(), "MaxPooling2D"},
      {Reshape(ReshapeOptions({4})).ptr(), "Reshape"},
  };
  const auto registered = registered_layers();
  for (const auto& [layer, keras_name] : layers) {
    EXPECT_EQ(layer->class_name(), keras_name);
    EXPECT_NE(std::find(registered.begin(), registered.end(), keras_name), registered.end()) << keras_name;
    EXPECT_EQ(layer_from_json(layer_to_json(*layer))->class_name(), keras_name);
  }
  EXPECT_STREQ(Conv2DImpl::keras_class_name, "Conv2D");
  EXPECT_STREQ(MaxPooling2DImpl::keras_class_name, "MaxPooling2D");
}

TEST(LayerClass, FamilyOptionSettersReturnTheLayersOwnOptions) {
  static_assert(std::is_same_v<decltype(Conv2DOptions(1, 1).strides(2)), Conv2DOptions&>);
  static_assert(std::is_same_v<decltype(DepthwiseConv2DOptions(1).activation("relu")), DepthwiseConv2DOptions&>);
  const Conv2DOptions o = Conv2DOptions(8, 3).activation("relu").padding("same").filters(16);
  EXPECT_EQ(o.filters(), 16);
  EXPECT_EQ(o.activation(), "relu");
  EXPECT_EQ(o.padding(), "same");
  EXPECT_EQ((*o.kernel_size())[1], 3);
  EXPECT_EQ((*o.strides())[0], 1) << "Keras's default";
}

// An output or weights too large to hold are a ConfigError naming the layer when the model is built (a
// dry run, a summary), not LibTorch's bare allocation error at the first batch.
TEST(LayerBuild, OutputsAndWeightsTooLargeAreRefusedNamingTheLayer) {
  const auto build_error = [](auto layer, const Shape& in) {
    try {
      layer->build(in);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string msg = build_error(Resizing(ResizingOptions(100000, 100000).name("big")).ptr(), Shape{8, 8, 3});
  EXPECT_NE(
      msg.find("layer 'big' (Resizing): its output (None, 100000, 100000, 3) holds 3e+10 values per sample (120 GB"),
      std::string::npos)
      << msg;
  EXPECT_NE(msg.find("more than 2^31 - 1"), std::string::npos) << msg;
  msg = build_error(UpSampling1D(UpSampling1DOptions(1000000000).name("up")).ptr(), Shape{5, 2});
  EXPECT_NE(msg.find("layer 'up' (UpSampling1D): its output (None, 5000000000, 2)"), std::string::npos) << msg;
  msg = build_error(Dense(DenseOptions(int64_t{1} << 40).name("wide")).ptr(), Shape{1000});
  EXPECT_NE(msg.find("layer 'wide' (Dense): cannot allocate its weights"), std::string::npos) << msg;
  // The largest shape that fits is built.
  EXPECT_EQ(build_error(Resizing(ResizingOptions(46340, 46340)).ptr(), Shape{8, 8, 1}), "no error");
}
