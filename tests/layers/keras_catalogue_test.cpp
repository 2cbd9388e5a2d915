// The layer catalogue against Keras's: every built-in (builtin_layer_classes) is a class Keras 3 exports from
// keras.layers (or a named older Keras class torchfit reads for old files), and at least 75 of Keras 3's
// classes are registered. The list below is keras/api/layers/__init__.py of Keras 3 (main, 2025: 135
// classes once aliases such as Convolution2D/MaxPool2D, the lowercase merge functions, Input, InputSpec,
// serialize and deserialize are left out) and Keras 3.15's six adaptive pooling classes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include <torchfit/layers/registry.h>

namespace keras_catalogue_test {

const std::set<std::string>& keras3_layer_classes() {
  static const std::set<std::string> names = {"TFSMLayer",
                                              "Activation",
                                              "ELU",
                                              "LeakyReLU",
                                              "PReLU",
                                              "ReLU",
                                              "Softmax",
                                              "AdditiveAttention",
                                              "Attention",
                                              "GroupQueryAttention",
                                              "MultiHeadAttention",
                                              "Conv1D",
                                              "Conv1DTranspose",
                                              "Conv2D",
                                              "Conv2DTranspose",
                                              "Conv3D",
                                              "Conv3DTranspose",
                                              "DepthwiseConv1D",
                                              "DepthwiseConv2D",
                                              "SeparableConv1D",
                                              "SeparableConv2D",
                                              "Dense",
                                              "EinsumDense",
                                              "Embedding",
                                              "Identity",
                                              "InputLayer",
                                              "Lambda",
                                              "Masking",
                                              "Wrapper",
                                              "Layer",
                                              "Add",
                                              "Average",
                                              "Concatenate",
                                              "Dot",
                                              "Maximum",
                                              "Minimum",
                                              "Multiply",
                                              "Subtract",
                                              "BatchNormalization",
                                              "GroupNormalization",
                                              "LayerNormalization",
                                              "RMSNormalization",
                                              "SpectralNormalization",
                                              "UnitNormalization",
                                              "AveragePooling1D",
                                              "AveragePooling2D",
                                              "AveragePooling3D",
                                              "GlobalAveragePooling1D",
                                              "GlobalAveragePooling2D",
                                              "GlobalAveragePooling3D",
                                              "GlobalMaxPooling1D",
                                              "GlobalMaxPooling2D",
                                              "GlobalMaxPooling3D",
                                              "MaxPooling1D",
                                              "MaxPooling2D",
                                              "MaxPooling3D",
                                              "AdaptiveAveragePooling1D",
                                              "AdaptiveAveragePooling2D",
                                              "AdaptiveAveragePooling3D",
                                              "AdaptiveMaxPooling1D",
                                              "AdaptiveMaxPooling2D",
                                              "AdaptiveMaxPooling3D",
                                              "CategoryEncoding",
                                              "Discretization",
                                              "HashedCrossing",
                                              "Hashing",
                                              "AugMix",
                                              "AutoContrast",
                                              "CenterCrop",
                                              "CutMix",
                                              "Equalization",
                                              "MaxNumBoundingBoxes",
                                              "MixUp",
                                              "RandAugment",
                                              "RandomBrightness",
                                              "RandomColorDegeneration",
                                              "RandomColorJitter",
                                              "RandomContrast",
                                              "RandomCrop",
                                              "RandomElasticTransform",
                                              "RandomErasing",
                                              "RandomFlip",
                                              "RandomGaussianBlur",
                                              "RandomGrayscale",
                                              "RandomHue",
                                              "RandomInvert",
                                              "RandomPerspective",
                                              "RandomPosterization",
                                              "RandomRotation",
                                              "RandomSaturation",
                                              "RandomSharpness",
                                              "RandomShear",
                                              "RandomTranslation",
                                              "RandomZoom",
                                              "Resizing",
                                              "Solarization",
                                              "IntegerLookup",
                                              "MelSpectrogram",
                                              "Normalization",
                                              "Pipeline",
                                              "Rescaling",
                                              "STFTSpectrogram",
                                              "StringLookup",
                                              "TextVectorization",
                                              "ActivityRegularization",
                                              "AlphaDropout",
                                              "Dropout",
                                              "GaussianDropout",
                                              "GaussianNoise",
                                              "SpatialDropout1D",
                                              "SpatialDropout2D",
                                              "SpatialDropout3D",
                                              "Cropping1D",
                                              "Cropping2D",
                                              "Cropping3D",
                                              "Flatten",
                                              "Permute",
                                              "RepeatVector",
                                              "Reshape",
                                              "UpSampling1D",
                                              "UpSampling2D",
                                              "UpSampling3D",
                                              "ZeroPadding1D",
                                              "ZeroPadding2D",
                                              "ZeroPadding3D",
                                              "Bidirectional",
                                              "ConvLSTM1D",
                                              "ConvLSTM2D",
                                              "ConvLSTM3D",
                                              "GRU",
                                              "GRUCell",
                                              "LSTM",
                                              "LSTMCell",
                                              "RNN",
                                              "SimpleRNN",
                                              "SimpleRNNCell",
                                              "StackedRNNCells",
                                              "TimeDistributed",
                                              "FlaxLayer",
                                              "JaxLayer",
                                              "TorchModuleWrapper"};
  return names;
}

// Older Keras classes torchfit registers for old files, each with the Keras that had it.
const std::set<std::string> kOlderKerasClasses = {"ThresholdedReLU"};  // tf.keras 2 (removed in Keras 3)

TEST(KerasCatalogue, EveryBuiltInIsAKerasClassAndAtLeast75OfKeras3sAreRegistered) {
  ASSERT_EQ(keras3_layer_classes().size(), 141u);
  int keras3 = 0;
  std::string missing;
  const auto builtins = torchfit::builtin_layer_classes();
  for (const std::string& name : builtins) {
    if (keras3_layer_classes().count(name)) {
      ++keras3;
    } else {
      EXPECT_TRUE(kOlderKerasClasses.count(name)) << name << " is registered but no Keras class of that name exists";
    }
  }
  for (const std::string& name : keras3_layer_classes()) {
    if (std::find(builtins.begin(), builtins.end(), name) == builtins.end()) missing += " " + name;
  }
  RecordProperty("keras3_classes_registered", keras3);
  EXPECT_GE(keras3, 75) << "registered " << keras3 << " of Keras 3's " << keras3_layer_classes().size()
                        << " layer classes; not yet:" << missing;
}

}  // namespace keras_catalogue_test
