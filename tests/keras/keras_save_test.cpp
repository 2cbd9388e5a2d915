// Keras 3 files out (keras/keras_save.h), checked by an independent reader: Python's zipfile/json and
// h5py read what torchfit wrote, and a float64 NumPy evaluation of config.json with model.weights.h5
// (tests/keras/reference/keras3_file_reference.py) must predict what torchfit predicts. The real Keras
// 3.15 file of ../shared/keras_models is the template for the file's structure.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/error.h>
#include <torchfit/keras/keras_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/random_flip.h>
#include <torchfit/layers/rescaling.h>
#include <torchfit/model/model.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/keras_optimizer_state.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/predict.h>
#include <torchfit/training/trainer.h>

#include "support/keras_reference.h"
#include "support/onnx_models.h"
#include "support/temp_dir.h"
#include "support/tfjs_reference.h"

namespace torchfit {
namespace {

using nlohmann::json;
using testing::TempDir;
using testing::tfjs_prediction;

std::string reference_script() {
  return std::string(TORCHFIT_SOURCE_DIR) + "/tests/keras/reference/keras3_file_reference.py";
}

// Runs the reference in `mode` with `args`; its RESULT JSON (the last argument it writes).
json run_reference(const std::string& mode, const std::vector<std::string>& args) {
  TempDir dir("keras_save_ref");
  std::string cmd = "/usr/bin/python3 '" + reference_script() + "' " + mode;
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " '" + dir.file("result.json") + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  json out;
  std::ifstream(dir.file("result.json")) >> out;
  return out;
}

std::string h5py_unavailable() {
  if (!testing::keras_reference_unavailable().empty()) return testing::keras_reference_unavailable();
  if (std::system("/usr/bin/python3 -c 'import h5py' >/dev/null 2>&1") != 0) return "/usr/bin/python3 lacks h5py";
  return "";
}

#define SKIP_WITHOUT_WRITERS()                                                             \
  do {                                                                                     \
    if (!keras::keras_import_available()) GTEST_SKIP() << "built without HDF5 and libzip"; \
    if (!h5py_unavailable().empty()) GTEST_SKIP() << h5py_unavailable();                   \
  } while (0)

at::Tensor input_of(const Model& model, int64_t batch, uint64_t seed) {
  at::manual_seed(seed);
  Shape dims = to_tensor_shape(model->input_shape());
  dims.insert(dims.begin(), batch);
  return at::rand(dims);
}

// The NumPy reader's prediction of a .keras file for an image batch `x` (N, C, H, W), as (N, C, H, W)
// for an image output.
at::Tensor reference_prediction(const std::string& file, const at::Tensor& x) {
  TempDir dir("keras_save_req");
  const at::Tensor nhwc = x.dim() == 4 ? x.permute({0, 2, 3, 1}).contiguous() : x;
  std::ofstream(dir.file("req.json")) << json{{"inputs", json::array({testing::tensor_json(nhwc)})}}.dump();
  const json out = run_reference("predict", {file, dir.file("req.json")});
  at::Tensor y = testing::detail::reference_tensor(out.at("outputs").at(0));
  return y.dim() == 4 ? y.permute({0, 3, 1, 2}).contiguous() : y;
}

TEST(KerasSave, AKerasWrittenModelIsWrittenBackAsKerasWroteIt) {
  SKIP_WITHOUT_WRITERS();
  const std::string real = std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/seq_cnn_mnist_keras3151.keras";
  if (!std::filesystem::exists(real)) GTEST_SKIP() << "../shared/keras_models is absent (a user's clone has none)";
  Model model = keras::load_keras_model(real);
  TempDir dir("keras_save");
  keras::save_keras_model(*model, dir.file("again.keras"));
  const json r = run_reference("structure", {real, dir.file("again.keras")});
  // What differs from Keras 3.15.1's own file: the arguments Keras added after 3.0 (an older Keras 3
  // refuses them), and Flatten's build_config (a layer without weights is built by its call).
  const std::vector<std::string> expected = {
      "missing /config/layers[0]/config/optional", "missing /config/layers[0]/config/ragged",
      "missing /config/layers[5]/build_config", "missing /config/layers[7]/config/quantization_config",
      "missing /config/layers[8]/config/quantization_config"};
  EXPECT_EQ(r.at("config").get<std::vector<std::string>>(), expected) << r.dump(1);
  EXPECT_TRUE(r.at("weights").empty()) << r.dump(1);  // every group, attribute, shape and dtype
  EXPECT_EQ(r.at("values").get<double>(), 0.0);       // every weight bit for bit
  EXPECT_EQ(r.at("entries"), json({"metadata.json", "config.json", "model.weights.h5"}));
  EXPECT_TRUE(r.at("stored").get<bool>());
}

TEST(KerasSave, CompileSettingsAreWrittenAsKerasWritesThem) {
  SKIP_WITHOUT_WRITERS();
  const std::string real = std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/seq_cnn_mnist_keras3151.keras";
  if (!std::filesystem::exists(real)) GTEST_SKIP() << "../shared/keras_models is absent (a user's clone has none)";
  Model model = keras::load_keras_model(real);
  keras::KerasSaveOptions options;  // what the Keras 3.15 file was compiled with
  options.compile = {{"loss", "sparse_categorical_crossentropy"},
                     {"metrics", {"accuracy"}},
                     {"optimizer", optimizer_config(OptimizerOptions(), 1e-3)}};
  TempDir dir("keras_save");
  keras::save_keras_model(*model, dir.file("compiled.keras"), options);
  const json r = run_reference("compile", {real, dir.file("compiled.keras")});
  EXPECT_TRUE(r.at("config").empty()) << r.dump(1);  // compile_config key by key, the optimizer's too
  const auto back = keras::keras_file_optimizer(keras::read_keras_file(dir.file("compiled.keras")));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name(), "adam");
  EXPECT_DOUBLE_EQ(back->learning_rate(), 1e-3);
  keras::save_keras_h5(*model, dir.file("compiled.h5"), options);
  const auto h5 = keras::read_keras_file(dir.file("compiled.h5"));
  EXPECT_EQ(h5.compile_config.at("loss"), "sparse_categorical_crossentropy");
  EXPECT_FALSE(h5.compile_config.at("optimizer_config").at("config").contains("use_ema"));  // tf.keras 2 refuses it
  EXPECT_EQ(keras::keras_file_optimizer(h5)->name(), "adam");
  options.compile["optimizer"]["name"] = "adamx";
  EXPECT_THROW(keras::save_keras_model(*model, dir.file("bad.keras"), options), ConfigError);
}

// `model` after one update of `optimizer` on a random batch of 4 (one-hot targets of its outputs).
Trainer trained_once(Model model, const OptimizerOptions& optimizer) {
  Trainer trainer(model, CompileOptions().loss("categorical_crossentropy").optimizer(optimizer));
  const at::Tensor x = input_of(model, 4, 11);
  const int64_t classes = model->output_shape().back();
  data::TensorIterator batches(x, at::one_hot(at::arange(4) % classes, classes).to(at::kFloat), 4);
  trainer.fit(batches, FitOptions().epochs(1).verbose(0));
  return trainer;
}

TEST(KerasSave, OptimizerVariablesAreWrittenAsKerasWritesThem) {
  SKIP_WITHOUT_WRITERS();
  const std::string dir_real = std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/";
  if (!std::filesystem::exists(dir_real)) GTEST_SKIP() << "../shared/keras_models is absent (a user's clone has none)";
  TempDir dir("keras_save");
  // Keras 3.15's file (Adam, 8 trainable weights: iterations, learning rate, then momentum and velocity of
  // each weight in turn) and tf.keras 2.4's ResNet-8 (Adam: iter, every m, every v; BatchNormalization's
  // moving statistics have none), each trained one step from its own weights and written back.
  for (const std::string file : {"seq_cnn_mnist_keras3151.keras", "resnet8_cifar10_tfkeras240.h5"}) {
    SCOPED_TRACE(file);
    const bool h5 = file.size() > 3 && file.substr(file.size() - 3) == ".h5";
    Trainer trainer = trained_once(keras::load_keras_model(dir_real + file), OptimizerOptions().learning_rate(1e-3));
    const std::string out = dir.file(h5 ? "adam.h5" : "adam.keras");
    EXPECT_EQ(save_keras_file(trainer, out), h5 ? "tf.keras 2 HDF5 model" : "Keras 3 model");
    const json r = run_reference("optimizer", {"adam", dir_real + file, out});
    EXPECT_TRUE(r.at("structure").empty()) << r.dump(1);  // names, shapes, dtypes, attributes as Keras's
    EXPECT_EQ(r.at("iterations"), 1);
    if (!h5) EXPECT_NEAR(r.at("learning_rate").get<double>(), 1e-3, 1e-10);
    EXPECT_EQ(r.at("weights"), h5 ? 34 : 8);
    EXPECT_LT(r.at("moment_err").get<double>(), 1e-5);  // m and v of one gradient
    EXPECT_EQ(r.at("sign_agree").get<double>(), 1.0);   // in each weight's Keras layout
  }
}

TEST(KerasSave, SgdMomentumIsWrittenInKerasFormAndUnwritableOptimizersAreNamed) {
  SKIP_WITHOUT_WRITERS();
  const std::string real = std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/seq_cnn_mnist_keras3151.keras";
  if (!std::filesystem::exists(real)) GTEST_SKIP() << "../shared/keras_models is absent (a user's clone has none)";
  TempDir dir("keras_save");
  Trainer sgd =
      trained_once(keras::load_keras_model(real), OptimizerOptions().name("sgd").learning_rate(0.1).momentum(0.9));
  save_keras_file(sgd, dir.file("sgd.keras"));
  const json r = run_reference("optimizer", {"sgd", real, dir.file("sgd.keras")});
  EXPECT_EQ(r.at("weights"), 8);
  EXPECT_EQ(r.at("iterations"), 1);
  EXPECT_NEAR(r.at("learning_rate").get<double>(), 0.1, 1e-8);
  EXPECT_LT(r.at("momentum_err").get<double>(), 1e-6);  // Keras's m = -lr g is the first update itself
  // Adagrad's variables are not written: the file is written without them, and the reason names it.
  Trainer adagrad = trained_once(keras::load_keras_model(real), OptimizerOptions().name("adagrad"));
  try {
    keras_optimizer_state(adagrad.optimizer(), adagrad.compile_options().optimizer(), 1);
    ADD_FAILURE() << "adagrad's variables were written";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'adagrad'"), std::string::npos) << e.what();
  }
  save_keras_file(adagrad, dir.file("adagrad.keras"));
  const json w = run_reference("structure", {real, dir.file("adagrad.keras")});
  EXPECT_TRUE(w.at("weights").empty()) << w.dump(1);  // the model's weights as ever
  EXPECT_THROW(keras_optimizer_state(adagrad.optimizer(), OptimizerOptions().use_ema(true), 1), ConfigError);
}

// Image models covering the layers the NumPy reader evaluates: Sequential and functional (branches,
// Add, Concatenate, merges), convolutions of every kind, pooling, BatchNormalization, padding, upsampling.
const std::vector<std::string> kReferenceModels = {
    "seed_cnn", "residual",      "conv_same_strided",   "depthwise_separable", "conv_transpose",
    "pooling",  "flatten_dense", "batch_normalization", "padding_cropping",    "upsampling_bilinear",
    "merges",   "bidirectional", "bidirectional_ave",   "time_distributed"};

TEST(KerasSave, WrittenModelsPredictWhatAnIndependentReaderComputes) {
  SKIP_WITHOUT_WRITERS();
  TempDir dir("keras_save");
  for (const auto& name : kReferenceModels) {
    SCOPED_TRACE(name);
    Model model = testing::onnx_test_models().at(name)();
    testing::randomize_weights(model, 5);
    const at::Tensor x = input_of(model, 2, 7);
    const at::Tensor y = model->forward(x).to(at::kDouble);
    const std::string file = dir.file(name + ".keras"), h5 = dir.file(name + ".h5");
    keras::save_keras_model(*model, file);
    keras::save_keras_h5(*model, h5);
    testing::expect_matches_reference(y, reference_prediction(file, x), 2e-5);
    testing::expect_matches_reference(y, reference_prediction(h5, x), 2e-5);
  }
}

TEST(KerasSave, ATfKeras2ModelIsWrittenBackAsTfKerasWroteIt) {
  SKIP_WITHOUT_WRITERS();
  const std::string real = std::string(TORCHFIT_SOURCE_DIR) + "/../shared/keras_models/resnet8_cifar10_tfkeras240.h5";
  if (!std::filesystem::exists(real)) GTEST_SKIP() << "../shared/keras_models is absent (a user's clone has none)";
  Model model = keras::load_keras_model(real);
  TempDir dir("keras_save");
  keras::save_keras_h5(*model, dir.file("again.h5"));
  const json r = run_reference("h5structure", {real, dir.file("again.h5")});
  EXPECT_EQ(r.at("root"), json({"training_config"})) << r.dump(1);  // the optimizer is not written
  EXPECT_TRUE(r.at("config").empty()) << r.dump(1);                 // model_config key by key
  EXPECT_TRUE(r.at("weights").empty()) << r.dump(1);                // groups, layer_names, weight_names, shapes, dtypes
  EXPECT_EQ(r.at("values").get<double>(), 0.0);
  EXPECT_EQ(r.at("root_types"), json({{"backend", "str"}, {"keras_version", "str"}, {"model_config", "str"}}));
}

// The test models TensorFlow.js 4.22's layers cover. Left out for what TensorFlow.js lacks or computes
// otherwise than Keras: Subtract, Dot, EinsumDense, GELU, adaptive pooling, 3-D layers, causal Conv1D, GRU
// with reset_after (TF.js: "not supported"), ReLU's negative_slope (ignored), and bilinear UpSampling2D (TF.js
// resizes without half-pixel centres, unlike TensorFlow 2's Keras).
const std::vector<std::string> kTfjsModels = {"seed_cnn",
                                              "residual",
                                              "conv_same_strided",
                                              "depthwise_separable",
                                              "conv_transpose",
                                              "pooling",
                                              "batch_normalization",
                                              "padding_cropping",
                                              "upsampling_nearest",
                                              "lstm",
                                              "simple_rnn",
                                              "layer_normalization_channels",
                                              "reshape",
                                              "permute",
                                              "dense_sequence",
                                              "activation_relu",
                                              "activation_sigmoid",
                                              "activation_tanh",
                                              "activation_elu",
                                              "activation_softplus",
                                              "embedding",
                                              "prelu_channels",
                                              "bidirectional",
                                              "time_distributed"};

TEST(KerasSave, TensorFlowJsLoadsTheExportAndPredictsWhatTorchfitPredicts) {
  TempDir dir("keras_save");
  for (const auto& name : kTfjsModels) {
    SCOPED_TRACE(name);
    Model model = testing::onnx_test_models().at(name)();
    testing::randomize_weights(model, 6);
    const at::Tensor x = input_of(model, 2, 8);
    keras::save_tfjs_model(*model, dir.file(name));
    std::string skip;
    const at::Tensor y = tfjs_prediction(dir.file(name), x, skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    if (y.defined()) testing::expect_matches_reference(model->forward(x).to(at::kDouble), y, 1e-5);
  }
  // TensorFlow.js's GRU is Keras's reset_after=False one (torchfit's default follows Keras 3: True).
  Model gru = testing::image_model("gru_reset_before", {4, 5, 2}, [](KerasTensor x) {
    x = Reshape(ReshapeOptions({4, 10}))->call(x);
    return GRU(GRUOptions(3).reset_after(false))->call(x);
  });
  testing::randomize_weights(gru, 6);
  const at::Tensor x = input_of(gru, 2, 8);
  keras::save_tfjs_model(*gru, dir.file("gru"));
  std::string skip;
  const at::Tensor y = tfjs_prediction(dir.file("gru"), x, skip);
  if (y.defined()) testing::expect_matches_reference(gru->forward(x).to(at::kDouble), y, 1e-5);
}

// The error of save_tfjs_model for `model` ("" when it writes).
std::string tfjs_error(const Model& model, const std::string& dir) {
  try {
    keras::save_tfjs_model(*model, dir);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(KerasSave, TfjsExportRefusesWhatTensorFlowJsCannotLoadOrComputesOtherwise) {
  TempDir dir("keras_save");
  const auto image = [](const std::function<KerasTensor(KerasTensor)>& body) {
    return testing::image_model("m", {4, 4, 3}, body);
  };
  EXPECT_NE(tfjs_error(image([](KerasTensor x) {
                         return Subtract()->call({x, x});
                       }),
                       dir.file("a"))
                .find("layer 'subtract' (Subtract): TensorFlow.js 4.22 has no such layer"),
            std::string::npos);
  EXPECT_NE(
      tfjs_error(image([](KerasTensor x) { return ReLU(ReLUOptions().negative_slope(0.1))->call(x); }), dir.file("b"))
          .find("ReLU ignores negative_slope"),
      std::string::npos);
  EXPECT_NE(tfjs_error(image([](KerasTensor x) {
                         return UpSampling2D(UpSampling2DOptions().interpolation("bilinear"))->call(x);
                       }),
                       dir.file("c"))
                .find("half-pixel"),
            std::string::npos);
  Model gru = testing::onnx_test_models().at("gru")();  // its last GRU has reset_after (Keras 3's default)
  EXPECT_NE(tfjs_error(gru, dir.file("d")).find("reset_after=True"), std::string::npos);
  EXPECT_NE(
      tfjs_error(image([](KerasTensor x) { return Dense(DenseOptions(2).name("conv ü"))->call(x); }), dir.file("e"))
          .find("layer 'conv ü' (Dense): TensorFlow.js takes layer names of"),
      std::string::npos);
  for (const char* d : {"a", "b", "c", "d", "e"}) EXPECT_FALSE(std::filesystem::exists(dir.file(d))) << d;
  Model slash = image([](KerasTensor x) { return Dense(DenseOptions(2).name("my/dense"))->call(x); });
  try {
    keras::keras3_model_config(*slash);  // the config every Keras writer writes (no HDF5 needed)
    FAIL() << "a '/' in a layer name was written";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no '/' in a layer name"), std::string::npos) << e.what();
  }
}

TEST(KerasSave, ATfjsFolderIsReplacedWhole) {
  TempDir dir("keras_save");
  Model big = testing::onnx_test_models().at("residual")();
  testing::randomize_weights(big, 1);
  keras::save_tfjs_model(*big, dir.file("web"));
  std::ofstream(dir.file("web") + "/group1-shard9of9.bin") << "stale";
  Model small = testing::onnx_test_models().at("seed_cnn")();
  testing::randomize_weights(small, 2);
  keras::save_tfjs_model(*small, dir.file("web"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("web") + "/group1-shard9of9.bin"));  // the old folder went whole
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) entries += e.path().filename() != "web";
  EXPECT_EQ(entries, 0u) << "a temporary folder was left beside the target";
  const at::Tensor x = input_of(small, 2, 4);
  EXPECT_TRUE(at::allclose(keras::load_keras_model(dir.file("web"))->forward(x), small->forward(x), 0, 0));
}

TEST(KerasSave, TfjsExportsReadBackIntoTorchfitAndBadShardsAreNamed) {
  TempDir dir("keras_save");
  for (const std::string name : {"residual", "lstm", "embedding"}) {
    SCOPED_TRACE(name);
    Model model = testing::onnx_test_models().at(name)();
    testing::randomize_weights(model, 2);
    keras::save_tfjs_model(*model, dir.file(name));
    const at::Tensor x = input_of(model, 2, 3);
    for (const auto& in : {dir.file(name), dir.file(name) + "/model.json"}) {
      ASSERT_TRUE(keras::is_tfjs_model(in)) << in;
      Model back = keras::load_keras_model(in);
      EXPECT_TRUE(at::allclose(back->forward(x), model->forward(x), 0, 0)) << in;
    }
  }
  const std::string shard = dir.file("residual") + "/group1-shard1of1.bin";
  std::filesystem::resize_file(shard, std::filesystem::file_size(shard) - 4);
  try {
    keras::load_keras_model(dir.file("residual"));
    FAIL() << "a short shard was read";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("the manifest declares"), std::string::npos) << e.what();
  }
  std::filesystem::remove(shard);
  try {
    keras::load_keras_model(dir.file("residual"));
    FAIL() << "a missing shard was read";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("group1-shard1of1.bin"), std::string::npos) << e.what();
  }
}

// The shard bytes of a TF.js folder's model.json weights, each entry's own.
std::vector<std::string> tfjs_entry_bytes(const json& specs, const std::string& data) {
  std::vector<std::string> out;
  size_t at = 0;
  for (const auto& w : specs) {
    size_t n = 4;
    for (int64_t d : w.at("shape").get<std::vector<int64_t>>()) n *= static_cast<size_t>(d);
    out.push_back(data.substr(at, n));
    at += n;
  }
  return out;
}

TEST(KerasSave, TfjsWeightsAreMatchedByNameAsTensorFlowJsMatchesThem) {
  if (!keras::keras_import_available()) GTEST_SKIP() << "built without HDF5 and libzip";
  TempDir dir("keras_save");
  Model model = testing::onnx_test_models().at("batch_normalization")();
  testing::randomize_weights(model, 3);
  const std::string web = dir.file("web");
  keras::save_tfjs_model(*model, web);
  std::ifstream in(web + "/model.json");
  json manifest = json::parse(in);
  json& specs = manifest["weightsManifest"][0]["weights"];
  std::ifstream shard_in(web + "/group1-shard1of1.bin", std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(shard_in)), std::istreambuf_iterator<char>());
  auto bytes = tfjs_entry_bytes(specs, data);
  // Each layer's entries in reverse (beta before gamma, bias before kernel): still a valid TF.js model.
  std::vector<size_t> order;
  for (size_t i = 0; i < specs.size();) {
    size_t j = i;
    const auto layer = [&](size_t k) {
      return specs[k]["name"].get<std::string>().substr(0, specs[k]["name"].get<std::string>().find('/'));
    };
    while (j < specs.size() && layer(j) == layer(i)) ++j;
    for (size_t k = j; k > i; --k) order.push_back(k - 1);
    i = j;
  }
  json reordered = json::array();
  std::string shard;
  for (size_t k : order) {
    reordered.push_back(specs[k]);
    shard += bytes[k];
  }
  specs = reordered;
  std::ofstream(web + "/model.json") << manifest.dump();
  std::ofstream(web + "/group1-shard1of1.bin", std::ios::binary) << shard;
  const at::Tensor x = input_of(model, 2, 5);
  EXPECT_TRUE(at::allclose(keras::load_keras_model(web)->forward(x), model->forward(x), 0, 0));
  // A name the layer has not is refused (TF.js refuses it), naming the weight.
  std::string bad = specs[0]["name"].get<std::string>() + "X";
  specs[0]["name"] = bad;
  std::ofstream(web + "/model.json") << manifest.dump();
  try {
    keras::load_keras_model(web);
    ADD_FAILURE() << "an unknown weight name was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
  }
}

TEST(KerasSave, AFolderHoldingOtherFilesIsNotReplacedAndNonFiniteWeightsAreNotWritten) {
  if (!keras::keras_import_available()) GTEST_SKIP() << "built without HDF5 and libzip";
  TempDir dir("keras_save");
  Model model = testing::onnx_test_models().at("seed_cnn")();
  std::filesystem::create_directories(dir.file("user"));
  std::ofstream(dir.file("user/notes.txt")) << "important";
  try {
    keras::save_tfjs_model(*model, dir.file("user"));
    ADD_FAILURE() << "a folder holding other files was replaced";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'notes.txt'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(dir.file("user/notes.txt")));
  {
    torch::NoGradGuard no_grad;
    model->parameters().front().view(-1)[0] = std::nan("");
  }
  EXPECT_THROW(keras::save_keras_model(*model, dir.file("nan.keras")), NumericError);
  EXPECT_THROW(keras::save_keras_h5(*model, dir.file("nan.h5")), NumericError);
  EXPECT_THROW(keras::save_tfjs_model(*model, dir.file("nan_web")), NumericError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("nan.keras")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("nan_web")));
}

TEST(KerasSave, EveryTestModelReadsBackToTheSamePredictions) {
  if (!keras::keras_import_available()) GTEST_SKIP() << "built without HDF5 and libzip";
  TempDir dir("keras_save");
  for (const auto& [name, make] : testing::onnx_test_models()) {
    SCOPED_TRACE(name);
    Model model = make();
    testing::randomize_weights(model, 3);
    const at::Tensor x = input_of(model, 2, 9);
    const std::string file = dir.file(name + ".keras");
    keras::save_keras_model(*model, file);
    const std::string h5 = dir.file(name + ".h5");
    keras::save_keras_h5(*model, h5);
    for (const auto& written : {file, h5}) {
      Model back = keras::load_keras_model(written);
      EXPECT_EQ(back->count_params(), model->count_params()) << written;
      EXPECT_TRUE(at::allclose(back->forward(x), model->forward(x), 0, 0)) << written << ": predictions differ";
    }
  }
}

TEST(KerasSave, WeightsFileHasKeras3sLayoutAndReadsBackWithTheArchitecture) {
  SKIP_WITHOUT_WRITERS();
  TempDir dir("keras_save");
  Model model = testing::onnx_test_models().at("residual")();
  testing::randomize_weights(model, 4);
  keras::save_keras_weights(*model, dir.file("m.weights.h5"));
  std::ofstream(dir.file("m.json")) << keras::keras3_model_config(*model).dump();
  const json r = run_reference("weights", {dir.file("m.weights.h5")});
  EXPECT_EQ(r.at("paths").at("layers/conv2d/vars/0"), json({{3, 3, 3, 8}, "float32"}));
  EXPECT_EQ(r.at("paths").at("layers/batch_normalization_1/vars/3"), json({{8}, "float32"}));  // moving variance
  EXPECT_EQ(r.at("paths").at("layers/dense/vars/1"), json({{4}, "float32"}));
  EXPECT_EQ(r.at("names").at("layers/input_layer/vars"), "image");  // a Functional's layers include its input
  EXPECT_EQ(r.at("names").at("vars"), "residual");
  Model back = keras::load_keras_model(dir.file("m.weights.h5"), dir.file("m.json"));
  const at::Tensor x = input_of(model, 2, 1);
  EXPECT_TRUE(at::allclose(back->forward(x), model->forward(x), 0, 0));
}

TEST(KerasSave, RefusesWhatKerasHasNoArgumentForAndNamesTheFileItCannotWrite) {
  if (!keras::keras_import_available()) GTEST_SKIP() << "built without HDF5 and libzip";
  TempDir dir("keras_save");
  KerasTensor in = Input({4, 4, 2}, "image");
  KerasTensor out = Flatten(FlattenOptions().element_order("channels_first"))->call(in);
  Model th({in}, {out}, "keras1_th");
  try {
    keras::save_keras_model(*th, dir.file("th.keras"));
    FAIL() << "a channels-first Flatten was written";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'flatten' (Flatten)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("element_order"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("th.keras")));
  Model model = testing::onnx_test_models().at("seed_cnn")();
  try {
    keras::save_keras_file(*model, dir.file("m.txt"));
    FAIL() << "a .txt was written as a Keras file";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("m.txt' names no Keras format"), std::string::npos) << e.what();
  }
  EXPECT_EQ(keras::save_keras_file(*model, dir.file("web") + "/"), "TensorFlow.js Layers model");
  EXPECT_TRUE(keras::is_tfjs_model(dir.file("web")));
  EXPECT_EQ(keras::save_keras_file(*model, dir.file("m.weights.h5")), "Keras 3 weights");
  const std::string nowhere = dir.file("no/such/dir/m.keras");
  try {
    keras::save_keras_model(*model, nowhere);
    FAIL() << "wrote into a missing directory";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find(nowhere), std::string::npos) << e.what();
  }
}

// What Python's zipfile + json, h5py and json read of the torchfit metadata in `file` (a .keras zip, a
// tf.keras 2 .h5, a TF.js model.json): an independent reader of what the writer put where.
json metadata_read_by_python(const std::string& file) {
  TempDir dir("keras_meta");
  const std::string script = dir.file("read.py"), out = dir.file("out.json");
  std::ofstream(script) << R"(import json, sys, zipfile
path, out = sys.argv[1], sys.argv[2]
if path.endswith('.keras'):
    meta = json.loads(zipfile.ZipFile(path).read('metadata.json'))
    got = {'torchfit': meta.get('torchfit'), 'keras_version': meta.get('keras_version')}
elif path.endswith('.h5'):
    import h5py
    a = h5py.File(path, 'r').attrs.get('torchfit')
    got = {'torchfit': json.loads(a) if a is not None else None}
else:
    got = {'torchfit': json.load(open(path)).get('userDefinedMetadata', {}).get('torchfit')}
json.dump(got, open(out, 'w'))
)";
  const std::string cmd = "/usr/bin/python3 '" + script + "' '" + file + "' '" + out + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  json got;
  std::ifstream(out) >> got;
  return got;
}

TEST(KerasSave, ClassNamesAndPreprocessingTravelInEveryKerasFormatAndKerasReadersIgnoreThem) {
  SKIP_WITHOUT_WRITERS();
  Model model = testing::onnx_test_models().at("residual")();
  testing::randomize_weights(model, 5);
  keras::KerasSaveOptions options;
  options.torchfit = keras::torchfit_metadata({{"sandal", 1}, {"boot", 0}, {"shirt", 2}}, {{"rescale", 1.0}});
  const json expected = {{"class_names", {"boot", "sandal", "shirt"}}, {"preprocessing", {{"rescale", 1.0}}}};
  TempDir dir("keras_save");
  const at::Tensor x = input_of(model, 2, 7);
  const at::Tensor y = model->forward(x).to(at::kDouble);
  for (const std::string name : {"m.keras", "m.h5", "web/"}) {
    SCOPED_TRACE(name);
    const std::string file = dir.file(name);
    keras::save_keras_file(*model, file, options);
    const std::string read_as = name == "web/" ? dir.file("web/model.json") : file;
    EXPECT_EQ(metadata_read_by_python(read_as).at("torchfit"), expected);
    saving::CheckpointInfo info;
    Model back = saving::load_checkpoint_or_keras(name == "web/" ? dir.file("web") : file, "", &info);
    EXPECT_EQ(info.class_indices, (std::map<std::string, int64_t>{{"boot", 0}, {"sandal", 1}, {"shirt", 2}}));
    EXPECT_EQ(info.preprocessing, expected.at("preprocessing"));
    if (name != "web/") testing::expect_matches_reference(y, reference_prediction(file, x), 2e-5);
  }
  std::string skip;  // TensorFlow.js loads a model.json with userDefinedMetadata
  const at::Tensor tfjs = tfjs_prediction(dir.file("web"), x, skip);
  if (tfjs.defined()) testing::expect_matches_reference(y, tfjs, 1e-5);
  // A file written without class names or preprocessing carries no torchfit key; Keras's own metadata stays.
  keras::save_keras_model(*model, dir.file("plain.keras"));
  const json plain = metadata_read_by_python(dir.file("plain.keras"));
  EXPECT_TRUE(plain.at("torchfit").is_null()) << plain.dump();
  EXPECT_EQ(plain.at("keras_version"), keras::kKerasWriteVersion);
  saving::CheckpointInfo info;
  saving::load_checkpoint_or_keras(dir.file("plain.keras"), "", &info);
  EXPECT_TRUE(info.class_indices.empty());
  EXPECT_TRUE(info.preprocessing.is_null());
}

TEST(KerasSave, BadTorchfitMetadataIsNamedAndGapsInTheClassIndicesDropTheNames) {
  EXPECT_TRUE(keras::torchfit_metadata({{"a", 0}, {"b", 2}}, nullptr).class_names.empty());
  EXPECT_EQ(keras::torchfit_metadata({{"b", 1}, {"a", 0}}, nullptr).class_names, (std::vector<std::string>{"a", "b"}));
  for (const json& bad : {json{{"class_names", {"a", 1}}}, json{{"class_names", "a"}},
                          json{{"class_names", {"a", "a"}}}, json{{"preprocessing", 2}}, json(3)}) {
    SCOPED_TRACE(bad.dump());
    try {
      keras::TorchfitMetadata::from_json(bad, "x.keras");
      FAIL() << "accepted";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find("x.keras: torchfit's metadata"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(keras::TorchfitMetadata::from_json(nullptr, "x.keras").empty());
}

TEST(KerasSave, AModelScalesItsOwnInputWhenRescalingComesBeforeItsFirstWeights) {
  const auto conv = [] { return Conv2D(Conv2DOptions(2, 3)); };
  EXPECT_TRUE(scales_own_input(*testing::image_model("a", {8, 8, 3}, [&](KerasTensor x) {
    x = RandomFlip(RandomFlipOptions())->call(x);  // identity at inference, before the Rescaling
    return conv()->call(Rescaling(RescalingOptions(1.0 / 255))->call(x));
  })));
  EXPECT_FALSE(scales_own_input(*testing::image_model("b", {8, 8, 3}, [&](KerasTensor x) {
    return Rescaling(RescalingOptions(2.0))->call(conv()->call(x));  // after the first weights
  })));
  EXPECT_FALSE(scales_own_input(*testing::image_model("c", {8, 8, 3}, [&](KerasTensor x) { return conv()->call(x); })));
}

}  // namespace
}  // namespace torchfit
