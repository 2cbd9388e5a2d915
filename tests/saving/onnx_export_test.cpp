// ONNX export (saving/onnx.h): the exported models run by an independent runtime, OpenCV DNN
// (cv::dnn::readNetFromONNX), against torchfit's forward on the same inputs. The ONNX checker, shape inference and a
// NumPy evaluation of every model are in tests/scripts/onnx_export_test.sh.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/layers/registry.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/onnx.h>

#include "support/npy.h"
#include "support/onnx_models.h"

#if TORCHFIT_HAVE_OPENCV_DNN
#include <opencv2/dnn.hpp>
#endif

using namespace torchfit;
using torchfit::testing::onnx_test_models;
using torchfit::testing::randomize_weights;

namespace {

// What OpenCV 4.6's ONNX importer cannot run (docs/deployment.md): each is checked to fail there, so the
// list stays true; the NumPy evaluator of tests/scripts/onnx_export_test.sh checks these models instead.
// LayerNormalization: the LayerNormalization operator (opset 17) is OpenCV >= 4.8's; the decomposition
// (ReduceMean, Sub, Div, ...) stops on 4.6's broadcasting (Div by (N, 1, 1, 1), ReduceMean over channels).
// ReLU with a threshold: its mask x > threshold (Greater, Cast) fails in 4.6's forward.
// GroupNormalization: 4.6 cannot permute the grouped (N, groups, −1) tensor back; RMSNormalization and
// UnitNormalization: the same broadcasting as LayerNormalization's (Div by the per-sample norm).
// GlobalAveragePooling1D: 4.6 cannot permute the (N, steps, C) of its ReduceMean over the steps.
// PReLU with an alpha that is not one per channel (shared_axes other than {1, 2} on an image): exported as
// relu(x) + alpha·(x − relu(x)) (OpenCV's PRelu takes one slope per channel), whose Mul by the (C, H, W) alpha
// 4.6 refuses.
// Attention / AdditiveAttention (concat and additive scores): 4.6 refuses the opset-13 Squeeze (axes as an input)
// after the MatMul that sums over the features.
// SimpleRNN: 4.6 has no RNN layer. LSTM: 4.6 refuses the opset-13 Squeeze (axes as an input) after it. GRU:
// 4.6 wants all six GRU inputs (sequence_lens, initial_h). Bidirectional: the same (its LSTM's opset-13
// Squeeze, its GRU's inputs; bidirectional_ave is a GRU).
// AutoContrast: 4.6 refuses its Min with a constant bound (eltwise_layer: inputs.size() >= 2).
// Resizing "nearest": its Gathers of source rows and columns (4.6 gathers one index only; its Resize reads no
// tf_half_pixel_for_nn and resizes nearest half_pixel from other sources than TensorFlow's).
bool opencv_cannot_run(const std::string& model, int /*opset*/) {
  static const std::set<std::string> models = {"conv3d_transpose",
                                               "simple_rnn",
                                               "lstm",
                                               "gru",
                                               "bidirectional",
                                               "bidirectional_ave",
                                               "layer_normalization_all",
                                               "layer_normalization_channels",
                                               "layer_normalization_vector",
                                               "relu_threshold",
                                               "group_unit_rms_normalization",
                                               "normalization_sequence",
                                               "prelu_full",
                                               "global_pooling1d_keepdims",
                                               "global_pooling_keepdims_1d",
                                               "dot_normalize",
                                               "resizing_nearest",
                                               "resizing_pad",
                                               "einsum_dense",
                                               "attention",
                                               "embedding",
                                               "embedding_image",
                                               "normalization_axes",
                                               "masking",
                                               "auto_contrast"};
  return models.count(model) > 0;
}

#if TORCHFIT_HAVE_OPENCV_DNN
// OpenCV DNN's forward of the ONNX `bytes` on `x` (float32, contiguous).
at::Tensor opencv_forward(const std::string& bytes, const at::Tensor& x) {
  cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  const at::Tensor input = x.contiguous();
  std::vector<int> dims(input.sizes().begin(), input.sizes().end());
  cv::Mat blob(static_cast<int>(dims.size()), dims.data(), CV_32F, input.data_ptr<float>());
  net.setInput(blob);
  cv::Mat out = net.forward();
  std::vector<int64_t> out_dims;
  for (int i = 0; i < out.dims; ++i) out_dims.push_back(out.size[i]);
  return at::from_blob(out.ptr<float>(), out_dims, at::kFloat).clone();
}
#endif

at::Tensor model_input(const Model& model, int64_t batch, uint64_t seed) {
  at::manual_seed(seed);
  Shape dims = to_tensor_shape(model->input_shape());
  dims.insert(dims.begin(), batch);
  return at::rand(dims);
}

}  // namespace

TEST(OnnxExport, RefusesAnOpsetOutside13To17) {
  Model model = onnx_test_models().at("padding_cropping")();
  for (int opset : {12, 18}) {
    saving::OnnxExportOptions options;
    options.opset = opset;
    try {
      saving::onnx_model_bytes(model, options);
      FAIL() << "opset " << opset << " accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("opset " + std::to_string(opset)), std::string::npos) << e.what();
    }
  }
}

// An image of unknown size through an adaptive pooling: its ONNX windows are the built size over the
// output size, so a dynamic export is refused naming the layer (at 12×12 the 8×8 model's 4×4 windows would
// give 3×3 values, not Keras's 2×2).
TEST(OnnxExport, AdaptivePoolingIsRefusedInADynamicExport) {
  KerasTensor x = input_tensor_of(
      std::make_shared<InputLayerImpl>(InputLayerOptions().input_shape(Shape{8, 8, 3}).unknown_axes({0, 1})));
  KerasTensor y = AdaptiveAveragePooling2D(AdaptivePooling2DOptions({2, 2}).name("adapt"))->call(x);
  Model model({x}, {y}, "adaptive");
  try {
    saving::onnx_model_bytes(model);
    FAIL() << "exported an adaptive pooling with a dynamic size";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("layer 'adapt' (AdaptiveAveragePooling2D)'s ONNX nodes hold sizes"), std::string::npos) << m;
  }
  auto fixed = AdaptiveAveragePooling2D(AdaptivePooling2DOptions({2, 2}));
  KerasTensor z = Input({8, 8, 3});
  EXPECT_NO_THROW(saving::onnx_model_bytes(Model({z}, {fixed->call(z)}, "adaptive_fixed")));
}

// LSTM and GRU export the default activations forward only: another activation or go_backwards (ONNX's reverse
// direction keeps the input's order) is refused naming the layer.
TEST(OnnxExport, RecurrentLayersRefuseOtherActivationsAndGoBackwards) {
  const auto refused = [](const std::function<KerasTensor(KerasTensor)>& layer, const std::string& word) {
    KerasTensor x = Input({4, 3});
    try {
      saving::onnx_model_bytes(Model({x}, {layer(x)}, "rnn"));
      FAIL() << word << " exported";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'r'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused([](KerasTensor x) { return LSTM(LSTMOptions(2).activation("relu").name("r"))->call(x); }, "relu");
  refused([](KerasTensor x) { return LSTM(LSTMOptions(2).recurrent_activation("linear").name("r"))->call(x); },
          "linear");
  refused([](KerasTensor x) { return GRU(GRUOptions(2).activation("relu").name("r"))->call(x); }, "relu");
  refused([](KerasTensor x) { return GRU(GRUOptions(2).go_backwards(true).name("r"))->call(x); }, "go_backwards");
  refused([](KerasTensor x) { return LSTM(LSTMOptions(2).go_backwards(true).name("r"))->call(x); }, "go_backwards");
}

// Bidirectional is one node of direction "bidirectional": a backward layer other than the forward layer's
// mirror, a forward layer going backwards, or a wrapped activation ONNX lacks is refused naming the layer.
TEST(OnnxExport, BidirectionalRefusesWhatOneBidirectionalNodeCannotCompute) {
  const auto refused = [](BidirectionalOptions o, const std::string& word) {
    KerasTensor x = Input({4, 3});
    try {
      saving::onnx_model_bytes(Model({x}, {Bidirectional(o.name("bi"))->call(x)}, "rnn"));
      FAIL() << word << " exported";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'bi'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused(BidirectionalOptions(LSTM(LSTMOptions(2))).backward_layer(LSTM(LSTMOptions(3).go_backwards(true)).ptr()),
          "mirror");
  refused(BidirectionalOptions(GRU(GRUOptions(2).go_backwards(true))), "forward layer without go_backwards");
  refused(BidirectionalOptions(SimpleRNN(SimpleRNNOptions(2).activation("relu"))), "relu");
}

TEST(OnnxExport, UnwritablePathIsAnIoErrorNamingIt) {
  Model model = onnx_test_models().at("padding_cropping")();
  const std::string path = "/nonexistent-torchfit-dir/model.onnx";
  try {
    saving::export_onnx(model, path);
    FAIL() << "wrote " << path;
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

namespace {

// A layer of the test's own: y = x². Without a hook it cannot be exported; SquareWithHook can.
class SquareImpl : public Layer {
 public:
  SquareImpl() : Layer("Square", "") {}
  at::Tensor forward(const at::Tensor& x) override { return x * x; }
  nlohmann::json config() const override { return base_config(); }

 protected:
  Shape build_impl(const Shape& in) override { return in; }
};

class SquareWithHookImpl : public SquareImpl {
 public:
  std::string export_onnx(saving::OnnxGraph& graph, const std::vector<std::string>& inputs) const override {
    return graph.add_node("Mul", {inputs[0], inputs[0]}, {}, name() + "/Mul");
  }
};

template <typename Impl>
Model square_model() {
  KerasTensor x = Input({3, 4, 2});
  KerasTensor y = std::make_shared<Impl>()->call(Conv2D(Conv2DOptions(2, 1))->call(x));
  return Model({x}, {y}, "user_layer");
}

}  // namespace

TEST(OnnxExport, UserLayerWithoutHookIsRefusedNamingLayerAndClass) {
  Model model = square_model<SquareImpl>();
  try {
    saving::onnx_model_bytes(model);
    FAIL() << "a layer without an exporter was written";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("layer 'square' (Square)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Layer::export_onnx"), std::string::npos) << msg;
  }
}

TEST(OnnxExport, UserLayerWithHookRunsInOpenCvAsInTorchfit) {
#if !TORCHFIT_HAVE_OPENCV_DNN
  GTEST_SKIP() << "OpenCV DNN not built in (apt-get install libopencv-dnn-dev, then reconfigure)";
#else
  Model model = square_model<SquareWithHookImpl>();
  randomize_weights(model, 5);
  const at::Tensor x = model_input(model, 2, 6);
  const at::Tensor expected = model->forward(x);
  const at::Tensor got = opencv_forward(saving::onnx_model_bytes(model), x);
  EXPECT_LE((got - expected).abs().max().item<double>(), 1e-5);
#endif
}

TEST(OnnxExport, MixedPrecisionModelExportsFloat32Weights) {
#if !TORCHFIT_HAVE_OPENCV_DNN
  GTEST_SKIP() << "OpenCV DNN not built in (apt-get install libopencv-dnn-dev, then reconfigure)";
#else
  Model model = torchfit::testing::residual_model();
  randomize_weights(model, 8);
  const at::Tensor x = model_input(model, 3, 9);
  const at::Tensor expected = model->forward(x);  // float32 policy: the weights as exported
  model->set_dtype_policy("mixed_bfloat16");
  const at::Tensor got = opencv_forward(saving::onnx_model_bytes(model), x);
  EXPECT_LE((got - expected).abs().max().item<double>(), 1e-5);
#endif
}

// One model of tests/support/onnx_models.h at one opset.
class OnnxOpenCv : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(OnnxOpenCv, RunsAsTorchfitWithin1e5) {
#if !TORCHFIT_HAVE_OPENCV_DNN
  GTEST_SKIP() << "OpenCV DNN not built in (apt-get install libopencv-dnn-dev, then reconfigure)";
#else
  const auto& [name, opset] = GetParam();
  Model model = onnx_test_models().at(name)();
  randomize_weights(model, 11);
  const at::Tensor x = model_input(model, 2, 12);
  const at::Tensor expected = model->forward(x);
  saving::OnnxExportOptions options;
  options.opset = opset;
  const std::string bytes = saving::onnx_model_bytes(model, options);
  if (opencv_cannot_run(name, opset)) {
    // Listed as beyond OpenCV 4.6 (docs/deployment.md). On 4.6 it must still fail, or the list is stale;
    // a newer OpenCV may run it, and must then give torchfit's values.
    std::string refused;
    at::Tensor got;
    try {
      got = opencv_forward(bytes, x);
    } catch (const cv::Exception& e) {
      refused = e.what();
    }
    const bool opencv_4_6 = CV_VERSION_MAJOR == 4 && CV_VERSION_MINOR == 6;
    if (!refused.empty()) {
      std::cout << "OpenCV " << CV_VERSION << " refuses " << name << " (expected): " << refused << "\n";
      if (!opencv_4_6) GTEST_SKIP() << "OpenCV " << CV_VERSION << " cannot run " << name << ": " << refused;
      return;
    }
    const bool equal = got.sizes() == expected.sizes() && (got - expected).abs().max().item<double>() <= 1e-5;
    if (got.sizes() == expected.sizes()) {
      std::cout << name << " opset " << opset << " runs in OpenCV " << CV_VERSION
                << ": max |OpenCV - torchfit| = " << (got - expected).abs().max().item<double>() << "\n";
    }
    if (opencv_4_6) {
      EXPECT_FALSE(equal) << name << " now runs in OpenCV " << CV_VERSION << ": update opencv_cannot_run";
    } else {
      EXPECT_TRUE(equal) << name << " runs in OpenCV " << CV_VERSION << " with other values than torchfit's";
    }
    return;
  }
  const at::Tensor got = opencv_forward(bytes, x);
  ASSERT_EQ(got.sizes(), expected.sizes()) << name;
  const double diff = (got - expected).abs().max().item<double>();
  std::cout << name << " opset " << opset << ": max |OpenCV - torchfit| = " << diff << "\n";
  EXPECT_LE(diff, 1e-5) << name << " at opset " << opset << " (OpenCV " << CV_VERSION << ")";
#endif
}

INSTANTIATE_TEST_SUITE_P(EveryModel, OnnxOpenCv,
                         ::testing::Combine(::testing::ValuesIn([] {
                                              std::vector<std::string> names;
                                              for (const auto& [name, build] : onnx_test_models())
                                                names.push_back(name);
                                              return names;
                                            }()),
                                            ::testing::Values(13, 17)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_opset" + std::to_string(std::get<1>(info.param));
                         });

#if TORCHFIT_HAVE_OPENCV_DNN && TORCHFIT_HAVE_KERAS_IMPORT
namespace {

std::string keras_models_dir() { return std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/"; }

// A Keras file of ../shared/keras_models imported, exported and run by OpenCV DNN on `x` (N, C, H, W):
// OpenCV's output against torchfit's forward and, when given, Keras's own outputs (written beside the file
// by Keras), each within 1e-5.
void expect_keras_file_runs_in_opencv(const std::string& file, const at::Tensor& x, const at::Tensor& keras) {
  Model model = saving::load_checkpoint_or_keras(keras_models_dir() + file);
  model->eval();
  const at::Tensor got = opencv_forward(saving::onnx_model_bytes(model), x);
  const double vs_torchfit = (got - model->forward(x)).abs().max().item<double>();
  std::cout << file << " in OpenCV " << CV_VERSION << ": max |OpenCV - torchfit| = " << vs_torchfit;
  EXPECT_LE(vs_torchfit, 1e-5);
  if (keras.defined()) {
    const double vs_keras = (got - keras).abs().max().item<double>();
    std::cout << ", max |OpenCV - Keras| = " << vs_keras;
    EXPECT_LE(vs_keras, 1e-5);
  }
  std::cout << "\n";
}

// The input and Keras's outputs stored beside `<base>.h5`, the input as (N, C, H, W).
std::pair<at::Tensor, at::Tensor> keras_sample(const std::string& base) {
  const auto input = torchfit::testing::read_npy(keras_models_dir() + base + ".input.npy");
  const auto keras = torchfit::testing::read_npy(keras_models_dir() + base + ".expected.npy");
  return {at::tensor(input.values<float>()).reshape(input.shape).permute({0, 3, 1, 2}).contiguous(),
          at::tensor(keras.values<float>()).reshape(keras.shape)};
}

}  // namespace
#endif

// MLCommons Tiny's ResNet-8 (tf.keras 2.4.0, residual stacks, stride-2 "same" convolutions) and DS-CNN
// (tf.keras 2.14, DepthwiseConv2D, BatchNormalization, AveragePooling2D) against Keras's outputs; MobileNetV1
// (96×96 visual wake words, ReLU(6), ZeroPadding2D) against torchfit's forward on random images.
TEST(OnnxExport, ImportedKerasModelsRunInOpenCvAsInKeras) {
#if !TORCHFIT_HAVE_OPENCV_DNN || !TORCHFIT_HAVE_KERAS_IMPORT
  GTEST_SKIP() << "needs OpenCV DNN (libopencv-dnn-dev) and the Keras import (libhdf5-dev, libzip-dev)";
#else
  const std::string probe = keras_models_dir() + "resnet8_cifar10_tfkeras240.h5";
  if (!std::filesystem::exists(probe)) GTEST_SKIP() << "../shared/keras_models is absent (" << probe << ")";
  for (const std::string base : {"resnet8_cifar10_tfkeras240", "dscnn_strww_tfkeras2140"}) {
    const auto [x, keras] = keras_sample(base);
    expect_keras_file_runs_in_opencv(base + ".h5", x, keras);
  }
  at::manual_seed(30);
  expect_keras_file_runs_in_opencv("mobilenetv1_vww96_tfkeras240.h5", at::rand({2, 3, 96, 96}), at::Tensor());
#endif
}
