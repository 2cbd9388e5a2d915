// train_cnn --load-model (the built binary): training starts from a Keras file's architecture and weights,
// and a model whose classes do not fit the data is refused saying so.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <torch/torch.h>

#include <torchfit/keras/keras_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/saving/checkpoint.h>

#include "support/image_tree.h"
#include "support/run_app.h"
#include "support/temp_dir.h"

// In a namespace of its own (unity batches share translation units).
namespace torchfit::train_cnn_load_model_test {
namespace fs = std::filesystem;
namespace {

const std::string kTrainCnn = std::string(TORCHFIT_BINARY_DIR) + "/apps/train_cnn";

using Ran = testing::AppRun;

Ran run(const std::string& args) { return testing::run_app(kTrainCnn + " --threads 1 --workers 1 " + args); }

}  // namespace

class TrainCnnLoadModel : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kTrainCnn)) GTEST_SKIP() << "train_cnn not built";
    if (!keras::keras_import_available()) GTEST_SKIP() << "Keras import off (no HDF5/libzip)";
    const std::string py = "/usr/bin/python3 " + std::string(TORCHFIT_SOURCE_DIR) + "/tests/keras/keras_fixtures.py '" +
                           dir.str() + "' >/dev/null 2>&1";
    if (std::system(py.c_str()) != 0) GTEST_SKIP() << "keras_fixtures.py failed (needs python3 with h5py)";
  }
  // A train/ and test/ tree of 11×11 RGB images (the tf2_full.h5 fixture's input) with `classes` classes.
  fs::path data(int classes) const {
    std::vector<std::string> names;
    for (int k = 0; k < classes; ++k) names.push_back("c" + std::to_string(k));
    const fs::path root = dir.path / ("data" + std::to_string(classes));
    testing::make_tree(root / "train", names, 4, 11);
    testing::make_tree(root / "test", names, 2, 11);
    return root;
  }
  std::string args(const fs::path& root, const std::string& run_dir) const {
    return "--data '" + root.string() + "' --load-model '" + (dir.path / "tf2_full.h5").string() +
           "' --target-size 11 --epochs 1 --batch-size 4 --no-augment --run-dir '" + (dir.path / run_dir).string() +
           "' --checkpoint '" + (dir.path / (run_dir + ".ckpt")).string() + "'";
  }
  testing::TempDir dir{"train_cnn_load_model"};
};

TEST_F(TrainCnnLoadModel, TrainsTheKerasModelFromItsWeights) {
  const Ran r = run(args(data(5), "run"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("starting from the model and weights of"), std::string::npos) << r.output;
  // The checkpoint holds the Keras model's layers (names kept), trained from there.
  Model m = saving::load_model((dir.path / "run.ckpt").string());
  EXPECT_EQ(m->layers().size(), 8u);
  EXPECT_EQ(m->get_layer("dw")->class_name(), "DepthwiseConv2D");
  EXPECT_EQ(m->output_shape(), (Shape{5}));
}

TEST_F(TrainCnnLoadModel, AClassCountThatDoesNotFitTheDataIsAUsageError) {
  const Ran r = run(args(data(3), "bad"));
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("outputs (None, 5) and the data has 3 classes (add --new-head"), std::string::npos)
      << r.output;
}

// The weights of layer `name` of the model in `ckpt` and of the Keras fixture, for comparison.
struct Trained {
  Model saved, keras;
  at::Tensor conv_kernel(bool from_keras) const {
    return std::dynamic_pointer_cast<Conv2DImpl>((from_keras ? keras : saved)->get_layer("conv2d"))->kernel;
  }
  std::shared_ptr<BatchNormalizationImpl> bn(bool from_keras) const {
    return std::dynamic_pointer_cast<BatchNormalizationImpl>((from_keras ? keras : saved)->get_layer("bn"));
  }
};

TEST_F(TrainCnnLoadModel, NewHeadIsADenseForTheDataClassesAndTheBaseTrains) {
  const Ran r = run(args(data(3), "head") + " --new-head");
  ASSERT_EQ(r.status, 0) << r.output;
  Trained t{saving::load_model((dir.path / "head.ckpt").string()),
            keras::load_keras_model((dir.path / "tf2_full.h5").string())};
  // Dense(3, softmax) reading the Dropout's 72 features (3 × 3 × 8), in place of the file's Dense(5).
  auto head = std::dynamic_pointer_cast<DenseImpl>(t.saved->get_layer("new_head"));
  ASSERT_TRUE(head);
  EXPECT_EQ(head->kernel.sizes(), (at::IntArrayRef{3, 72}));
  EXPECT_EQ(head->options.activation(), "softmax");
  EXPECT_THROW(t.saved->get_layer("dense"), ConfigError);
  EXPECT_EQ(t.saved->output_shape(), (Shape{3}));
  // Not frozen: the base's weights and BatchNormalization's moving statistics moved.
  EXPECT_FALSE(at::equal(t.conv_kernel(false), t.conv_kernel(true)));
  EXPECT_FALSE(at::equal(t.bn(false)->moving_mean, t.bn(true)->moving_mean));
}

TEST_F(TrainCnnLoadModel, FreezeBaseKeepsTheBaseWeightsAndBatchNormStatistics) {
  const Ran r = run(args(data(3), "frozen") + " --new-head --freeze-base");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("7 layers frozen"), std::string::npos) << r.output;
  Trained t{saving::load_model((dir.path / "frozen.ckpt").string()),
            keras::load_keras_model((dir.path / "tf2_full.h5").string())};
  EXPECT_TRUE(at::equal(t.conv_kernel(false), t.conv_kernel(true)));
  EXPECT_TRUE(at::equal(t.bn(false)->gamma, t.bn(true)->gamma));
  EXPECT_TRUE(at::equal(t.bn(false)->moving_mean, t.bn(true)->moving_mean));  // inference mode
  EXPECT_TRUE(at::equal(t.bn(false)->moving_variance, t.bn(true)->moving_variance));
  EXPECT_FALSE(t.saved->get_layer("conv2d")->trainable());
  EXPECT_TRUE(t.saved->get_layer("new_head")->trainable());
  EXPECT_EQ(t.saved->trainable_params(), 3 * 72 + 3);
}

}  // namespace torchfit::train_cnn_load_model_test
