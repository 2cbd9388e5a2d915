// The input preprocessing a checkpoint records (CheckpointInfo::preprocessing): what the training source
// standardised its images with, read back into ImageDataGeneratorOptions for predictions. The reference
// is Keras's standardize formula written out on the tensor (x · rescale, minus the sample's mean).
#include <gtest/gtest.h>

#include <filesystem>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/trainer.h>

#include "support/image_tree.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;

namespace preprocessing_checkpoint_test {

Sequential image_classifier() {
  Sequential m;
  m->add(Flatten(FlattenOptions().input_shape(Shape{8, 8, 3})));
  m->add(Dense(DenseOptions(2).activation("softmax")));
  return m;
}

saving::CheckpointInfo train_and_read(Model model, data::BatchIterator& source, const std::string& path) {
  Trainer t(model, CompileOptions().loss("categorical_crossentropy"));
  auto checkpoint = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(path));
  t.fit(source, FitOptions().epochs(1).steps_per_epoch(1).verbose(0).callbacks({checkpoint}));
  return saving::Checkpoint::read(path)->info();
}

TEST(PreprocessingCheckpoint, AnImageFolderRunRecordsItsStandardisationAndPredictionsReadItBack) {
  torchfit::testing::TempDir dir("preprocessing_ckpt");
  torchfit::testing::make_tree(dir.path / "train", {"a", "b"}, 4, 8);
  data::ImageDataGenerator gen(
      data::ImageDataGeneratorOptions().rescale(0.5).samplewise_center(true).rotation_range(10).horizontal_flip(true));
  auto train = gen.flow_from_directory((dir.path / "train").string(),
                                       data::FlowOptions().target_size({8, 8}).batch_size(4).seed(1).verbose(false));
  const auto info = train_and_read(image_classifier(), *train, dir.file("m.ckpt"));
  const nlohmann::json expected = {
      {"rescale", 0.5}, {"samplewise_center", true}, {"samplewise_std_normalization", false}};
  EXPECT_EQ(info.preprocessing, expected) << info.preprocessing.dump();

  // Read back: the standardisation only (no rotation, no flip), applied as Keras's standardize does.
  const auto options = data::preprocessing_from_config(info.preprocessing);
  EXPECT_EQ(data::options_text(options), "rescale=0.5 samplewise_center=true");
  const at::Tensor image = at::arange(48, at::kFloat).reshape({3, 4, 4}) * 5;
  const at::Tensor expected_image = image * 0.5 - (image * 0.5).mean();
  const at::Tensor got = data::ImageDataGenerator(options).standardize(image.clone());
  EXPECT_TRUE(at::allclose(got, expected_image, 1e-5, 1e-5)) << got;
}

TEST(PreprocessingCheckpoint, InMemoryDataRecordsNoneAndBadConfigsNameTheKey) {
  torchfit::testing::TempDir dir("preprocessing_ckpt2");
  data::TensorIterator tensors(at::rand({4, 4}), at::one_hot(at::arange(4) % 3, 3).to(at::kFloat), 4);
  EXPECT_TRUE(train_and_read(torchfit::testing::tiny_mlp(), tensors, dir.file("t.ckpt")).preprocessing.is_null());
  EXPECT_EQ(data::options_text(data::preprocessing_from_config(nullptr)), "none");
  const auto error_of = [](const nlohmann::json& config) -> std::string {
    try {
      data::preprocessing_from_config(config);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of({{"rescale", "1/255"}}).find("rescale must be a finite number >= 0"), std::string::npos);
  EXPECT_NE(error_of({{"rescale", -1}}).find("rescale must be a finite number >= 0"), std::string::npos);
  EXPECT_NE(error_of({{"samplewise_center", 1}}).find("samplewise_center must be true or false"), std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::array()).find("expected an object"), std::string::npos);
}

}  // namespace preprocessing_checkpoint_test
