// Keras `axis` arguments resolved against the layer's input as Keras does (issue 37 item 7): tf.keras 2.x
// files (h5py, tests/keras/keras_axis_fixtures.py) whose BatchNormalization says "axis": [1] after a
// Dense, [3] after a Conv2D, 1 on (T, D) rows, whose Softmax and LayerNormalization take lists, checked
// against a float64 NumPy forward written from Keras's formulas; axes outside the input refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <torch/torch.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/saving/onnx.h>

#include "support/keras_fixture_suite.h"
#include "support/npy.h"
#include "support/temp_dir.h"

#if TORCHFIT_HAVE_OPENCV_DNN
#include <opencv2/dnn.hpp>
#endif

// In a namespace of its own (unity batches share the file scope with keras_import_test.cpp).
namespace torchfit::keras_axis_test {

namespace fs = std::filesystem;

class KerasAxis : public testing::KerasFixtureSuite<KerasAxis> {
 public:
  static constexpr const char* kScript = "tests/keras/keras_axis_fixtures.py";
  static constexpr const char* kTag = "keras_axis";

 protected:
  // Probabilities within 1e-5 and (for a Dense softmax output, whose activation forward_logits leaves
  // out) logits within 1e-4 relative of the NumPy reference (eval mode).
  static void expect_outputs(Model& model, const std::string& stem) {
    torch::NoGradGuard no_grad;
    model->eval();
    const at::Tensor x = testing::nchw(testing::npy_tensor(file(stem + ".input.npy")));
    const at::Tensor probs = model->forward(x), logits = model->forward_logits(x);
    const at::Tensor want = testing::npy_tensor(file(stem + ".expected.npy")),
                     want_logits = testing::npy_tensor(file(stem + ".expected_logits.npy"));
    EXPECT_LT((probs - want).abs().max().item<double>(), 1e-5) << stem << "\n" << probs << "\n" << want;
    if (model->layers().back()->class_name() != "Dense") return;  // a Softmax layer: no logits output
    const double scale = std::max(1.0, want_logits.abs().max().item<double>());
    EXPECT_LT((logits - want_logits).abs().max().item<double>() / scale, 1e-4) << stem << "\n" << logits;
  }

  static std::string load_error(const std::string& name) {
    try {
      keras::load_keras_model(file(name));
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "(loaded)";
  }
};

TEST_F(KerasAxis, BatchNormalizationAfterADenseWithAxisListOneMatchesNumPy) {
  auto model = keras::load_keras_model(file("bn_vector.h5"));
  auto bn1 = std::dynamic_pointer_cast<BatchNormalizationImpl>(model->get_layer("bn1"));
  ASSERT_TRUE(bn1);
  EXPECT_EQ(bn1->tensor_axis(), 1);
  EXPECT_EQ(bn1->moving_mean.sizes().vec(), (std::vector<int64_t>{5}));
  EXPECT_EQ(bn1->config()["axis"], nlohmann::json::array({1})) << "the axis is written back as Keras gave it";
  EXPECT_DOUBLE_EQ(model->get_layer("bn2")->config()["epsilon"].get<double>(), 0.01);
  expect_outputs(model, "bn_vector");
}

TEST_F(KerasAxis, ImageAndVectorAxesIntsListsAndLayerNormalizationMatchNumPy) {
  auto model = keras::load_keras_model(file("bn_image.h5"));
  expect_outputs(model, "bn_image");
}

TEST_F(KerasAxis, BatchNormalizationOnRowsAndOnFeaturesOfATimeSeriesMatchesNumPy) {
  // (T, D) = (3, 4): axis [1] keeps T statistics (tensor axis 1), axis 2 keeps D (tensor axis 2).
  auto model = keras::load_keras_model(file("bn_rows.h5"));
  EXPECT_EQ(std::dynamic_pointer_cast<BatchNormalizationImpl>(model->get_layer("bn_t"))->tensor_axis(), 1);
  EXPECT_EQ(std::dynamic_pointer_cast<BatchNormalizationImpl>(model->get_layer("bn_d"))->tensor_axis(), 2);
  expect_outputs(model, "bn_rows");
}

TEST_F(KerasAxis, TheModelsSurviveToJsonAndBack) {
  for (const std::string stem : {"bn_vector", "bn_image", "bn_rows"}) {
    auto model = keras::load_keras_model(file(stem + ".h5"));
    Model again = model_from_json(model->to_json());
    EXPECT_EQ(again->to_json(), model->to_json()) << stem;
    {
      torch::NoGradGuard no_grad;
      auto to = again->named_parameters();
      for (const auto& p : model->named_parameters()) to[p.key()].copy_(p.value());
    }
    expect_outputs(again, stem);
  }
}

TEST_F(KerasAxis, AnAxisOutsideTheInputOrSeveralAxesAreRefusedNamingLayerAndShape) {
  const std::string outside = load_error("bad_axis.h5");
  EXPECT_NE(outside.find("bad_axis.h5: config.layers[2] ('bn', BatchNormalization): axis [2]: 2 is outside the input "
                         "(None, 5) (Keras axes "
                         "1..1 or -1..-1)"),
            std::string::npos)
      << outside;
  const std::string two = load_error("bn_two_axes.h5");
  EXPECT_NE(two.find("bn_two_axes.h5: config.layers[1] ('bn', BatchNormalization): axis [1,3] names 2 axes of the "
                     "input (None, 4, 4, 3); "
                     "normalisation over one axis only is supported"),
            std::string::npos)
      << two;
}

// ONNX normalises dim 1: a BatchNormalization on another axis is exported between two Transposes.
TEST_F(KerasAxis, OnnxExportOfANonChannelAxisGivesKerasNumbers) {
#if !TORCHFIT_HAVE_OPENCV_DNN
  GTEST_SKIP() << "OpenCV DNN not built in (libopencv-dnn-dev)";
#else
  for (const std::string stem : {"bn_rows", "bn_vector"}) {
    auto model = keras::load_keras_model(file(stem + ".h5"));
    const std::string bytes = saving::onnx_model_bytes(model);
    cv::dnn::Net net = cv::dnn::readNetFromONNX(bytes.data(), bytes.size());
    at::Tensor x = testing::npy_tensor(file(stem + ".input.npy")).contiguous();
    std::vector<int> dims(x.sizes().begin(), x.sizes().end());
    net.setInput(cv::Mat(static_cast<int>(dims.size()), dims.data(), CV_32F, x.data_ptr<float>()));
    cv::Mat out = net.forward();
    const at::Tensor got = at::from_blob(out.ptr<float>(), {out.size[0], out.size[1]}, at::kFloat).clone();
    const at::Tensor want = testing::npy_tensor(file(stem + ".expected.npy"));
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << stem << "\n" << got << "\n" << want;
  }
#endif
}

}  // namespace torchfit::keras_axis_test
