// Layers that meet more than one input size (issue 37, items 1 and 2): a layer shared by two image sizes
// (keras#5108) and a fully convolutional model whose input size Keras left unknown, as tf.keras 2.4 files
// written with h5py (tests/keras/keras_shape_fixtures.py), checked against that script's float64 NumPy
// forward pass written from Keras's layer definitions; the ONNX export against tests/scripts/onnx_check.py's
// NumPy evaluation of the ONNX operators.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/saving/onnx.h>

#include "support/keras_fixture_suite.h"
#include "support/npy.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit {
namespace keras_shapes_test {

using keras::load_keras_model;

using testing::nchw;
using testing::npy_tensor;
std::string text_of(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

class KerasShapes : public testing::KerasFixtureSuite<KerasShapes> {
 public:
  static constexpr const char* kScript = "tests/keras/keras_shape_fixtures.py";
  static constexpr const char* kTag = "keras_shapes";

 protected:
  // Probabilities of `stem`'s input within 1e-5 of the NumPy reference.
  static void expect_outputs(Model& model, const std::string& stem) {
    torch::NoGradGuard no_grad;
    const at::Tensor got = model->forward(nchw(npy_tensor(file(stem + ".input.npy"))));
    const at::Tensor want = npy_tensor(file(stem + ".expected.npy"));
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
  }
};

// keras#5108: one Conv2D on a 12x12x3 input and on its 6x6x3 max-pooled copy shares its weights.
TEST_F(KerasShapes, ConvSharedByTwoImageSizesMatchesTheNumpyReference) {
  auto model = load_keras_model(file("shared.h5"));
  expect_outputs(model, "shared");
  const auto s = model->get_layer("s");
  EXPECT_EQ(s->count_params(), 3 * 3 * 3 * 4 + 4);  // one kernel, not one per size
  const std::string summary = model->summary();
  EXPECT_NE(summary.find("s (Conv2D)                      multiple"), std::string::npos) << summary;
}

// TensorFlow's "same" padding with strides follows each call's size: 12 pads (0, 1), its 11x11 crop (1, 1).
TEST_F(KerasShapes, SharedSamePaddingFollowsEachCallsSize) {
  auto model = load_keras_model(file("shared_same.h5"));
  expect_outputs(model, "shared_same");
}

// The same architecture from Keras's JSON (train_cnn --model-config) builds, with the same weights count.
TEST_F(KerasShapes, SharedLayerBuildsFromKerasJson) {
  Model model = model_from_json_text(text_of(file("shared.json")), "shared.json");
  EXPECT_EQ(model->output_shape(), (Shape{3}));
  EXPECT_EQ(model->count_params(), 3 * 3 * 3 * 4 + 4 + 4 * 3 + 3);
}

// A shape its weights do not fit (3 channels, then 5) is still refused, naming the layer, both shapes and
// the weight.
TEST_F(KerasShapes, SharedLayerOnAnotherChannelCountIsRefusedNamingBothShapes) {
  try {
    model_from_json_text(text_of(file("shared_channels.json")), "shared_channels.json");
    FAIL() << "built a Conv2D for 3 and 5 channels";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    for (const char* part : {"layer 's' (Conv2D)", "(None, 12, 12, 3)", "(None, 12, 12, 5)", "'kernel'"}) {
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
    }
  }
}

// (None, None, 3): refused without a size, naming the input and the option; built at the size given, it
// also predicts at other sizes, and to_json writes Keras's None again.
TEST_F(KerasShapes, InputOfUnknownSizeBuildsAtTheGivenSizeAndTakesOthers) {
  try {
    load_keras_model(file("fcn.h5"));
    FAIL() << "built a model of unknown size without a size";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("layer 'img' (InputLayer)"), std::string::npos) << m;
    EXPECT_NE(m.find("KerasImportOptions::input_size"), std::string::npos) << m;
  }
  keras::KerasImportOptions options;
  options.input_size = InputSize{16, 16};
  auto model = load_keras_model(file("fcn.h5"), "", options);
  EXPECT_EQ(model->input_shape(), (Shape{16, 16, 3}));
  EXPECT_EQ(model->unknown_input_axes(), (std::vector<int64_t>{0, 1}));
  expect_outputs(model, "fcn16");
  expect_outputs(model, "fcn12x20");
  const auto batch = model->to_json()["config"]["layers"][0]["config"]["batch_input_shape"];
  EXPECT_EQ(batch, nlohmann::json::parse("[null, null, null, 3]")) << batch;
}

// A Flatten makes the Dense after it depend on the size: another size is refused naming both layers.
TEST_F(KerasShapes, FlattenAfterAnInputOfUnknownSizeNeedsTheBuiltSize) {
  keras::KerasImportOptions options;
  options.input_size = InputSize{16, 16};
  auto model = load_keras_model(file("fcn_flatten.h5"), "", options);
  torch::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(at::rand({2, 3, 16, 16})).sizes(), (at::IntArrayRef{2, 3}));
  try {
    model->forward(at::rand({2, 3, 12, 20}));
    FAIL() << "a Dense after a Flatten took another size";
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    for (const char* part : {"layer 'out' (Dense)", "layer 'flat' (Flatten)", "(None, 784)"}) {
      EXPECT_NE(m.find(part), std::string::npos) << part << " not in: " << m;
    }
  }
  try {
    saving::onnx_model_bytes(model);
    FAIL() << "exported a size-dependent model with a dynamic size";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'flat' (Flatten)"), std::string::npos) << e.what();
  }
}

// The ONNX export keeps the height and width dynamic (dim_param); the NumPy ONNX evaluator
// (tests/scripts/onnx_check.py) gives Keras's numbers at two sizes.
TEST_F(KerasShapes, InputOfUnknownSizeExportsDynamicOnnx) {
  keras::KerasImportOptions options;
  options.input_size = InputSize{16, 16};
  auto model = load_keras_model(file("fcn.h5"), "", options);
  saving::export_onnx(model, file("fcn.onnx"));
  const std::string code = R"(
sys.path.insert(0, data["scripts"])
import numpy as np, onnx_check
m = onnx.load(data["onnx"])
onnx.checker.check_model(m, full_check=True)
out = {"input": onnx_check.dims(m.graph.input[0]), "output": onnx_check.dims(m.graph.output[0])}
for stem in ("fcn16", "fcn12x20"):
    x = np.load(data["dir"] + "/" + stem + ".input.npy").transpose(0, 3, 1, 2)
    want = np.load(data["dir"] + "/" + stem + ".expected.npy")
    out[stem] = float(np.abs(onnx_check.evaluate(m, x) - want).max())
)";
  const auto r = testing::run_python({"numpy", "onnx"}, code,
                                     {{"scripts", std::string(TORCHFIT_SOURCE_DIR) + "/tests/scripts"},
                                      {"onnx", file("fcn.onnx")},
                                      {"dir", file("")}});
  TORCHFIT_REQUIRE_PYTHON(r);
  EXPECT_EQ(r.out["input"], nlohmann::json::parse(R"(["N", 3, "img_height", "img_width"])")) << r.out.dump();
  EXPECT_EQ(r.out["output"], nlohmann::json::parse(R"(["N", 3])")) << r.out.dump();
  EXPECT_LT(r.out["fcn16"].get<double>(), 1e-5);
  EXPECT_LT(r.out["fcn12x20"].get<double>(), 1e-5);
}

}  // namespace keras_shapes_test
}  // namespace torchfit
