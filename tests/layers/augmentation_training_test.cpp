// A model that starts with every augmentation layer (RandomRotation, RandomZoom, RandomTranslation, RandomShear,
// RandomContrast, RandomBrightness, RandomGrayscale, RandomColorDegeneration, RandomSharpness,
// RandomPosterization, Solarization, Equalization, AutoContrast, RandAugment, RandomCrop) trains on CPU, and
// 1 epoch + checkpoint + resume reproduces 2 epochs in one run step for step (the layers' draws come from the
// CPU generator the checkpoint restores); predict is deterministic (eval: identity, AutoContrast's stretch,
// RandomCrop's smart_resize).
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/layers/auto_contrast.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/equalization.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/rand_augment.h>
#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_color_degeneration.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_crop.h>
#include <torchfit/layers/random_grayscale.h>
#include <torchfit/layers/random_posterization.h>
#include <torchfit/layers/random_rotation.h>
#include <torchfit/layers/random_sharpness.h>
#include <torchfit/layers/random_shear.h>
#include <torchfit/layers/random_translation.h>
#include <torchfit/layers/random_zoom.h>
#include <torchfit/layers/solarization.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"

using namespace torchfit;

namespace {

std::unique_ptr<Trainer> augmented_trainer() {
  at::manual_seed(11);  // the same initial weights
  Sequential m;
  m->add(RandomRotation(RandomRotationOptions(0.1).input_shape(Shape{14, 14, 3})));
  m->add(RandomZoom(RandomZoomOptions(0.2)));
  m->add(RandomTranslation(RandomTranslationOptions(0.1, 0.1).fill_mode("constant")));
  m->add(RandomShear(RandomShearOptions().x_factor(0.2)));
  m->add(RandomContrast(RandomContrastOptions(0.3).value_range({0.0, 1.0})));
  m->add(RandomBrightness(RandomBrightnessOptions(0.1).value_range({0.0, 1.0})));
  m->add(RandomGrayscale(RandomGrayscaleOptions().factor(0.2)));
  m->add(RandomColorDegeneration(RandomColorDegenerationOptions(0.3).value_range({0.0, 1.0})));
  m->add(RandomSharpness(RandomSharpnessOptions(0.8).value_range({0.0, 1.0})));
  m->add(RandomPosterization(RandomPosterizationOptions(8).value_range({0.0, 1.0})));
  m->add(Solarization(SolarizationOptions().addition_factor(0.1).threshold_factor({0.8, 1.0}).value_range({0.0, 1.0})));
  m->add(Equalization(EqualizationOptions().value_range({0.0, 1.0})));
  m->add(AutoContrast(AutoContrastOptions().value_range({0.0, 1.0})));
  m->add(RandAugment(RandAugmentOptions().num_ops(2).factor(0.3).value_range({0.0, 1.0})));
  m->add(RandomCrop(RandomCropOptions(12, 12)));
  m->add(Conv2D(Conv2DOptions(4, 3).activation("relu")));
  m->add(Flatten());
  m->add(Dense(DenseOptions(3).activation("softmax")));
  return std::make_unique<Trainer>(m, CompileOptions());
}

struct LossRecorder : Callback {
  std::vector<double> values;
  void on_train_batch_end(int64_t, const Logs& logs) override { values.push_back(logs.at("batch_loss")); }
};

}  // namespace

TEST(AugmentationTraining, TrainsAndResumesExactlyAndPredictsWithoutAugmenting) {
  torchfit::testing::TempDir dir("augment_resume");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::rand({24, 3, 14, 14}, gen);
  const at::Tensor y = at::one_hot(at::arange(24) % 3, 3).to(at::kFloat);
  const auto opts = [](int epochs) { return FitOptions().epochs(epochs).steps_per_epoch(3).verbose(0); };

  auto whole = augmented_trainer();
  data::TensorIterator a(x, y, 8, true, 3);
  auto rec_whole = std::make_shared<LossRecorder>();
  whole->fit(a, opts(2).callbacks({rec_whole}));

  auto first = augmented_trainer();
  data::TensorIterator b(x, y, 8, true, 3);
  auto rec = std::make_shared<LossRecorder>();
  first->fit(b, opts(1).callbacks({rec}));
  const std::string ckpt = (dir.path / "e1.ckpt").string();
  first->save_checkpoint(ckpt);
  at::manual_seed(999);  // the checkpoint must restore the generator the layers draw from
  auto resumed = augmented_trainer();
  data::TensorIterator c(x, y, 8, true, 3);
  resumed->fit(c, opts(2).resume_from(ckpt).callbacks({rec}));

  ASSERT_EQ(rec_whole->values.size(), 6u);
  ASSERT_EQ(rec->values.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(rec->values[i], rec_whole->values[i], 1e-6) << "step " << i;
  for (const auto& p : whole->model()->named_parameters()) {
    EXPECT_LT((p.value() - resumed->model()->named_parameters()[p.key()]).abs().max().item<double>(), 1e-6) << p.key();
  }

  // Inference: the augmentation layers pass the images through, so predictions repeat.
  whole->model()->eval();
  const at::Tensor p1 = whole->model()->forward(x);
  const at::Tensor p2 = whole->model()->forward(x);
  EXPECT_TRUE(at::equal(p1, p2));
}
