// Keras files in (saving/keras_file.h, saving/keras_import.h): h5py fixtures in Keras's layouts checked
// against a float64 NumPy forward pass (tests/keras/keras_fixtures.py), and the real Keras files in
// ../shared/keras_models against their expected outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/saving/onnx.h>

#include "support/keras_fixture_suite.h"
#include "support/npy.h"
#include "support/temp_dir.h"

#if TORCHFIT_HAVE_OPENCV_DNN
#include <opencv2/dnn.hpp>
#endif

namespace torchfit {
namespace {

namespace fs = std::filesystem;
using keras::load_keras_model;

using testing::nchw;
using testing::npy_tensor;
// Writes the fixtures once per test binary run (python3-h5py; skips when it is missing).
class KerasImport : public testing::KerasFixtureSuite<KerasImport> {
 public:
  static constexpr const char* kScript = "tests/keras/keras_fixtures.py";
  static constexpr const char* kTag = "keras_import";
  // The real Keras files, when ../shared has them.
  static std::vector<std::string> script_args() {
    const std::string real = shared_dir() + "/seq_cnn_mnist_keras3151.keras";
    const std::string mobilenet = shared_dir() + "/mobilenetv1_vww96_tfkeras240.h5";
    if (!fs::exists(real) || !fs::exists(mobilenet)) return {};
    return {real, mobilenet};
  }
  static std::string shared_dir() { return std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models"; }

 protected:
  // Probabilities within 1e-5 and logits within 1e-4 relative of the NumPy reference.
  static void expect_outputs(Model& model, const at::Tensor& x, const std::string& prefix) {
    torch::NoGradGuard no_grad;
    const at::Tensor probs = model->forward(x), logits = model->forward_logits(x);
    const at::Tensor want = npy_tensor(prefix + ".expected.npy");
    const at::Tensor want_logits = npy_tensor(prefix + ".expected_logits.npy");
    EXPECT_LT((probs - want).abs().max().item<double>(), 1e-5) << probs << "\n" << want;
    const double scale = std::max(1.0, want_logits.abs().max().item<double>());
    EXPECT_LT((logits - want_logits).abs().max().item<double>() / scale, 1e-4) << logits << "\n" << want_logits;
  }
};

TEST_F(KerasImport, TfKeras2FullModelMatchesTheNumpyReference) {
  // Conv2D 'same' stride 2 on an odd input, BatchNormalization axis [3], DepthwiseConv2D multiplier 2
  // without bias, ReLU, MaxPooling2D, Flatten (Keras's (H, W, C) order) + Dense.
  auto f = keras::read_keras_file(file("tf2_full.h5"));
  EXPECT_EQ(f.kind, "h5 model");
  EXPECT_EQ(f.keras_version, "2.4.0");
  ASSERT_EQ(f.weights.size(), 4u);  // weightless layers (empty float64 weight_names) hold none
  EXPECT_EQ(f.weights[1].names,
            (std::vector<std::string>{"bn/gamma:0", "bn/beta:0", "bn/moving_mean:0", "bn/moving_variance:0"}));
  auto model = load_keras_model(file("tf2_full.h5"));
  EXPECT_EQ(model->get_layer("bn")->class_name(), "BatchNormalization");
  EXPECT_DOUBLE_EQ(model->get_layer("bn")->config()["momentum"].get<double>(), 0.9);
  expect_outputs(model, nchw(npy_tensor(file("tf2_full.input.npy"))), file("tf2_full"));
}

// The optimizer each file was compiled with: tf.keras 2's training_config (RMSprop, with its legacy
// decay 0) and Keras 3's compile_config (Nadam with clipnorm), read into OptimizerOptions.
TEST_F(KerasImport, TheCompiledOptimizerIsRead) {
  const auto rms = keras::keras_file_optimizer(keras::read_keras_file(file("tf2_full.h5")));
  ASSERT_TRUE(rms);
  EXPECT_EQ(rms->name(), "rmsprop");
  EXPECT_FLOAT_EQ(static_cast<float>(rms->learning_rate()), 0.002f);
  EXPECT_EQ(rms->rho(), 0.8);
  EXPECT_EQ(rms->momentum(), 0.5);
  EXPECT_TRUE(rms->centered());
  const auto nadam = keras::keras_file_optimizer(keras::read_keras_file(file("keras3.keras")));
  ASSERT_TRUE(nadam);
  EXPECT_EQ(nadam->name(), "nadam");
  EXPECT_EQ(nadam->learning_rate(), 0.003);
  EXPECT_EQ(nadam->beta_1(), 0.85);
  EXPECT_EQ(nadam->beta_2(), 0.99);
  EXPECT_EQ(nadam->clipnorm(), 1.0);
  EXPECT_FALSE(keras::keras_file_optimizer(keras::read_keras_file(file("unsupported.h5"))));  // none saved
  // The real files of ../shared, when there: Keras 3.15's and tf.keras 2.4's Adam.
  for (const char* name : {"seq_cnn_mnist_keras3151.keras", "mobilenetv1_vww96_tfkeras240.h5"}) {
    const std::string path = shared_dir() + "/" + name;
    if (!fs::exists(path)) continue;
    const auto adam = keras::keras_file_optimizer(keras::read_keras_file(path));
    ASSERT_TRUE(adam) << path;
    EXPECT_EQ(adam->name(), "adam") << path;
    EXPECT_FALSE(adam->amsgrad()) << path;
  }
}

TEST_F(KerasImport, Keras1TheanoWeightsAndArchitectureMatchTheNumpyReference) {
  // Kernels stored (out, in, kh, kw) and convolved (flipped); Flatten in (C, H, W); fixed-length names.
  auto model = load_keras_model(file("keras1_th_weights.h5"), file("keras1_th_arch.json"));
  EXPECT_EQ(model->input_shape(), (Shape{6, 5, 2}));
  expect_outputs(model, npy_tensor(file("keras1_th.input.npy")), file("keras1_th"));
}

TEST_F(KerasImport, Keras1TensorflowBackendIsNotFlipped) {
  // The same file read as if TensorFlow had trained it: the kernels are not flipped, so the outputs differ.
  keras::KerasImportOptions tf;
  tf.keras1_backend = "tensorflow";
  auto model = load_keras_model(file("keras1_th_weights.h5"), file("keras1_th_arch.json"), tf);
  torch::NoGradGuard no_grad;
  const auto got = model->forward(npy_tensor(file("keras1_th.input.npy")));
  EXPECT_GT((got - npy_tensor(file("keras1_th.expected.npy"))).abs().max().item<double>(), 1e-3);
}

TEST_F(KerasImport, Keras3ZipMatchesTheNumpyReference) {
  // layers/<key>/vars/<i> with keys counted per class (conv2d, conv2d_1, dense, dense_1), not the names.
  auto f = keras::read_keras_file(file("keras3.keras"));
  EXPECT_EQ(f.kind, "keras zip");
  EXPECT_EQ(f.keras_major(), 3);
  ASSERT_NE(f.find("conv_b"), nullptr);
  EXPECT_EQ(f.find("conv_b")->shapes[0], (std::vector<int64_t>{1, 1, 3, 4}));  // declared, not read
  auto model = load_keras_model(file("keras3.keras"));
  expect_outputs(model, nchw(npy_tensor(file("keras3.input.npy"))), file("keras3"));
}

TEST_F(KerasImport, FunctionalGraphOfTheNewLayersMatchesTheNumpyReference) {
  // tf.keras 2.x functional model.save: Conv2DTranspose (kh, kw, out, in), SeparableConv2D (depthwise +
  // pointwise + bias), LayerNormalization (gamma, beta), the weightless ZeroPadding2D, Cropping2D,
  // UpSampling2D, ReLU, Softmax, Rescaling, Concatenate, Multiply, Add; Conv2D 'same' at stride 2 on an
  // even input (TensorFlow pads only after); Flatten -> Dropout -> Dense in Keras's (H, W, C) order.
  auto model = load_keras_model(file("graph.h5"));
  EXPECT_EQ(model->get_layer("deconv")->class_name(), "Conv2DTranspose");
  EXPECT_EQ(model->output_shape(), (Shape{5}));
  expect_outputs(model, nchw(npy_tensor(file("graph.input.npy"))), file("graph"));
}

TEST_F(KerasImport, Keras3FunctionalGraphMatchesTheNumpyReference) {
  // The same model and weights as a Keras 3 .keras zip: {"args": [...]} inbound nodes with
  // __keras_tensor__ keras_history, layers/<snake_case class>[_n]/vars/<i> keys (separable_conv2d,
  // conv2d_transpose, layer_normalization, re_lu), LeakyReLU-style negative_slope on ReLU.
  auto model = load_keras_model(file("graph.keras"));
  expect_outputs(model, nchw(npy_tensor(file("graph.input.npy"))), file("graph"));
}

// Issue 37 item 0: every path from an image to a Dense computes Keras's numbers — Flattens merged by a
// Concatenate, one Flatten feeding two Denses, Concatenate on the channel and height axes, Reshape((-1,))
// and a rank-2 Reshape before a Flatten (keras_fixtures.py's float64 NumPy forward, from Keras's
// definitions), as tf.keras 2.x .h5 and as Keras 3 .keras.
TEST_F(KerasImport, EveryPathFromAFlattenToADenseMatchesTheNumpyReference) {
  for (const std::string name : {"flatten_paths.h5", "flatten_paths.keras"}) {
    SCOPED_TRACE(name);
    auto model = load_keras_model(file(name));
    EXPECT_EQ(model->output_shape(), (Shape{5}));
    expect_outputs(model, nchw(npy_tensor(file("flatten_paths.input.npy"))), file("flatten_paths"));
  }
}

// The same model after to_json and a rebuild from that JSON (weights copied by name): the config is
// Keras's (no torchfit-only Flatten order), and it still computes Keras's numbers.
TEST_F(KerasImport, FlattenPathsSurviveToJsonAsKerasConfig) {
  auto model = load_keras_model(file("flatten_paths.h5"));
  const nlohmann::json config = model->to_json();
  EXPECT_EQ(config.dump().find("element_order"), std::string::npos) << config.dump();
  Model rebuilt = model_from_json(config);
  {
    torch::NoGradGuard no_grad;
    auto from = model->named_parameters(true);
    for (auto& p : rebuilt->named_parameters(true)) p.value().copy_(from[p.key()]);
  }
  rebuilt->eval();
  expect_outputs(rebuilt, nchw(npy_tensor(file("flatten_paths.input.npy"))), file("flatten_paths"));
}

// The ONNX export of that model, run by OpenCV DNN, gives Keras's probabilities.
TEST_F(KerasImport, FlattenPathsExportToOnnxWithKerasNumbers) {
#if !TORCHFIT_HAVE_OPENCV_DNN
  GTEST_SKIP() << "OpenCV DNN not built in (libopencv-dnn-dev)";
#else
  auto model = load_keras_model(file("flatten_paths.h5"));
  const std::string bytes = saving::onnx_model_bytes(model);
  cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
  const at::Tensor x = nchw(npy_tensor(file("flatten_paths.input.npy")));
  std::vector<int> dims(x.sizes().begin(), x.sizes().end());
  net.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F, x.data_ptr<float>()));
  cv::Mat out = net.forward();
  const at::Tensor got = at::from_blob(out.ptr<float>(), {out.size[0], out.size[1]}, at::kFloat).clone();
  const at::Tensor want = npy_tensor(file("flatten_paths.expected.npy"));
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
#endif
}

// A Keras 1 "th" model's Flatten keeps the (C, H, W) order that Keras 1 used (no transpose), and says so in
// its config, which Keras would refuse rather than run in another order.
TEST_F(KerasImport, Keras1TheanoFlattenKeepsChannelsFirstOrderAndSaysSo) {
  auto model = load_keras_model(file("keras1_th_weights.h5"), file("keras1_th_arch.json"));
  bool found = false;
  for (const auto& layer : model->layers()) {
    if (const auto* f = dynamic_cast<const FlattenImpl*>(layer.get())) {
      found = true;
      EXPECT_FALSE(f->flattens_channels_last());
      EXPECT_EQ(f->config().value("element_order", ""), "channels_first");
    }
  }
  EXPECT_TRUE(found);
}

TEST_F(KerasImport, WeightsOnlyFileWithoutArchitectureSaysWhatIsMissing) {
  try {
    keras::read_keras_file(file("keras1_th_weights.h5"));
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("keras1_th_weights.h5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("architecture JSON"), std::string::npos) << e.what();
  }
}

TEST_F(KerasImport, UnsupportedLayerIsRefusedNamingFileLayerAndClass) {
  try {
    load_keras_model(file("unsupported.h5"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unsupported.h5"), std::string::npos) << m;
    EXPECT_NE(m.find("'locally_connected2d'"), std::string::npos) << m;
    EXPECT_NE(m.find("LocallyConnected2D"), std::string::npos) << m;
  }
}

TEST_F(KerasImport, NotAKerasFileIsAnIoErrorNamingIt) {
  const std::string junk = file("junk.h5");
  { std::ofstream(junk) << "not hdf5"; }
  EXPECT_THROW(keras::read_keras_file(junk), IoError);
  EXPECT_THROW(keras::read_keras_file(file("missing.keras")), IoError);
}

TEST_F(KerasImport, RealKeras1TheanoMnistGivesKerasOwnPrediction) {
  const std::string d = shared_dir();
  if (!fs::exists(d + "/mnist_cnn_keras1_th_weights.h5")) GTEST_SKIP() << d << " is absent (real Keras files)";
  auto model = load_keras_model(d + "/mnist_cnn_keras1_th_weights.h5", d + "/mnist_cnn_keras1_th_arch.json");
  torch::NoGradGuard no_grad;
  const auto got = model->forward(npy_tensor(d + "/mnist_cnn_keras1_th.sample_input.npy"));
  const auto want = npy_tensor(d + "/mnist_cnn_keras1_th.sample_keras_output.npy");
  EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
}

TEST_F(KerasImport, RealKeras3SequentialMatchesTheNumpyReference) {
  if (!fs::exists(shared_dir() + "/seq_cnn_mnist_keras3151.keras")) {
    GTEST_SKIP() << shared_dir() << " is absent (real Keras files)";
  }
  auto model = load_keras_model(shared_dir() + "/seq_cnn_mnist_keras3151.keras");
  EXPECT_EQ(model->input_shape(), (Shape{28, 28, 1}));
  expect_outputs(model, nchw(npy_tensor(file("real_keras3.input.npy"))), file("real_keras3"));
}

TEST_F(KerasImport, RealDsCnnFunctionalChainMatchesTheExpectedOutputs) {
  // tf.keras 2.14 Functional (a single chain): DepthwiseConv2D k×1 and Conv2D 1×1 without bias,
  // BatchNormalization with "scale": 1, variable-length string attributes; input (30, 1, 40).
  const std::string stem = shared_dir() + "/dscnn_strww_tfkeras2140";
  if (!fs::exists(stem + ".h5")) GTEST_SKIP() << shared_dir() << " is absent (real Keras files)";
  auto model = load_keras_model(stem + ".h5");
  EXPECT_EQ(model->input_shape(), (Shape{30, 1, 40}));
  expect_outputs(model, nchw(npy_tensor(stem + ".input.npy")), stem);
}

TEST_F(KerasImport, RealMobileNetV1FunctionalChainMatchesTheNumpyReference) {
  // tf.keras 2.4 MobileNetV1 x0.25: Conv2D and DepthwiseConv2D 'same' at stride 2 (96 -> 48), BN, ReLU,
  // AveragePooling2D, Flatten, Dense softmax; the reference (keras_fixtures.py) reproduces the DS-CNN's
  // given outputs exactly.
  const std::string path = shared_dir() + "/mobilenetv1_vww96_tfkeras240.h5";
  if (!fs::exists(path)) GTEST_SKIP() << shared_dir() << " is absent (real Keras files)";
  auto model = load_keras_model(path);
  expect_outputs(model, nchw(npy_tensor(file("real_mobilenet.input.npy"))), file("real_mobilenet"));
}

TEST_F(KerasImport, RealResNet8FunctionalMatchesTheExpectedOutputs) {
  // tf.keras 2.4 functional ResNet-8: Add of the residual branches, Conv2D 'same' at stride 2 (TensorFlow
  // pads the odd pixel after: 32 -> 16 -> 8), BatchNormalization, AveragePooling2D, Flatten -> Dense
  // (Keras's (H, W, C) element order), L2-regularized kernels.
  const std::string stem = shared_dir() + "/resnet8_cifar10_tfkeras240";
  if (!fs::exists(stem + ".h5")) GTEST_SKIP() << shared_dir() << " is absent (real Keras files)";
  auto model = load_keras_model(stem + ".h5");
  EXPECT_EQ(model->count_params(), 78666);
  EXPECT_EQ(model->get_layer("add")->class_name(), "Add");
  expect_outputs(model, nchw(npy_tensor(stem + ".input.npy")), stem);
}

}  // namespace
}  // namespace torchfit
