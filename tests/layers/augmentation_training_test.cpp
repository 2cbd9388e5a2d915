// A model that starts with every augmentation layer (RandomRotation, RandomZoom, RandomTranslation, RandomShear,
// RandomContrast, RandomBrightness, RandomGrayscale, RandomHue, RandomSaturation, RandomColorJitter,
// RandomErasing, MixUp, CutMix, RandomColorDegeneration, RandomSharpness, RandomPosterization, Solarization,
// Equalization, AutoContrast, RandAugment, RandomCrop) trains on CPU, and 1 epoch + checkpoint + resume
// reproduces 2 epochs in one run step for step (the layers' draws come from the CPU generator the checkpoint
// restores); predict is deterministic (eval: identity, AutoContrast's stretch, RandomCrop's smart_resize). A
// Trainer whose train_step mixes each batch's images and one-hot labels with CutMix and MixUp
// (docs/data_pipeline.md, "Mixing labels") trains and resumes step for step too.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/layers/auto_contrast.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/cut_mix.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/equalization.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/mix_up.h>
#include <torchfit/layers/rand_augment.h>
#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_color_degeneration.h>
#include <torchfit/layers/random_color_jitter.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_crop.h>
#include <torchfit/layers/random_erasing.h>
#include <torchfit/layers/random_grayscale.h>
#include <torchfit/layers/random_hue.h>
#include <torchfit/layers/random_posterization.h>
#include <torchfit/layers/random_rotation.h>
#include <torchfit/layers/random_saturation.h>
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

// Keras's data-pipeline use of MixUp and CutMix ({"images", "labels"}): each training batch mixed, labels too.
class MixingTrainer : public Trainer {
 public:
  using Trainer::Trainer;
  Logs train_step(const data::Batch& batch) override {
    data::Batch mixed = batch;
    std::tie(mixed.x, mixed.y) = cut_mix_->mix(batch.x, batch.y);
    std::tie(mixed.x, mixed.y) = mix_up_->mix(mixed.x, mixed.y);
    last_labels = mixed.y;
    return Trainer::train_step(mixed);
  }
  at::Tensor last_labels;  // the targets of the last step

 private:
  CutMix cut_mix_;
  MixUp mix_up_;
};

template <typename T = Trainer>
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
  m->add(RandomHue(RandomHueOptions(0.2).value_range({0.0, 1.0})));
  m->add(RandomSaturation(RandomSaturationOptions({0.3, 0.7}).value_range({0.0, 1.0})));
  m->add(RandomColorJitter(RandomColorJitterOptions()
                               .value_range({0.0, 1.0})
                               .brightness_factor(KerasFactor(0.1))
                               .contrast_factor(KerasFactor(0.2))
                               .saturation_factor(KerasFactor(0.4, 0.6))
                               .hue_factor(KerasFactor(0.1))));
  m->add(RandomErasing(RandomErasingOptions().value_range({0.0, 1.0})));
  m->add(MixUp());
  m->add(CutMix());
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
  return std::make_unique<T>(m, CompileOptions());
}

struct LossRecorder : Callback {
  std::vector<double> values;
  void on_train_batch_end(int64_t, const Logs& logs) override { values.push_back(logs.at("batch_loss")); }
};

}  // namespace

namespace {

// fit() for 2 epochs in one run and for 1 epoch + checkpoint + resume: the same batch losses and final weights.
template <typename T>
void expect_resumes_step_for_step(const std::string& dir_name, std::unique_ptr<Trainer>* whole_out) {
  torchfit::testing::TempDir dir(dir_name);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::rand({24, 3, 14, 14}, gen);
  const at::Tensor y = at::one_hot(at::arange(24) % 3, 3).to(at::kFloat);
  const auto opts = [](int epochs) { return FitOptions().epochs(epochs).steps_per_epoch(3).verbose(0); };

  std::unique_ptr<Trainer> whole = augmented_trainer<T>();
  data::TensorIterator a(x, y, 8, true, 3);
  auto rec_whole = std::make_shared<LossRecorder>();
  whole->fit(a, opts(2).callbacks({rec_whole}));

  std::unique_ptr<Trainer> first = augmented_trainer<T>();
  data::TensorIterator b(x, y, 8, true, 3);
  auto rec = std::make_shared<LossRecorder>();
  first->fit(b, opts(1).callbacks({rec}));
  const std::string ckpt = (dir.path / "e1.ckpt").string();
  first->save_checkpoint(ckpt);
  at::manual_seed(999);  // the checkpoint must restore the generator the layers draw from
  std::unique_ptr<Trainer> resumed = augmented_trainer<T>();
  data::TensorIterator c(x, y, 8, true, 3);
  resumed->fit(c, opts(2).resume_from(ckpt).callbacks({rec}));

  ASSERT_EQ(rec_whole->values.size(), 6u);
  ASSERT_EQ(rec->values.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(rec->values[i], rec_whole->values[i], 1e-6) << "step " << i;
  for (const auto& p : whole->model()->named_parameters()) {
    EXPECT_LT((p.value() - resumed->model()->named_parameters()[p.key()]).abs().max().item<double>(), 1e-6) << p.key();
  }
  *whole_out = std::move(whole);
}

}  // namespace

TEST(AugmentationTraining, TrainsAndResumesExactlyAndPredictsWithoutAugmenting) {
  std::unique_ptr<Trainer> whole;
  expect_resumes_step_for_step<Trainer>("augment_resume", &whole);
  ASSERT_TRUE(whole);
  // Inference: the augmentation layers pass the images through, so predictions repeat.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::rand({24, 3, 14, 14}, gen);
  whole->model()->eval();
  const at::Tensor p1 = whole->model()->forward(x);
  const at::Tensor p2 = whole->model()->forward(x);
  EXPECT_TRUE(at::equal(p1, p2));
}

TEST(AugmentationTraining, MixedLabelsTrainAndResumeExactly) {
  std::unique_ptr<Trainer> whole;
  expect_resumes_step_for_step<MixingTrainer>("mix_resume", &whole);
  // The targets the compiled step trained on were mixed: soft, each row still summing to 1.
  const at::Tensor labels = dynamic_cast<MixingTrainer&>(*whole).last_labels;
  ASSERT_TRUE(labels.defined());
  EXPECT_TRUE(((labels > 1e-3) & (labels < 1 - 1e-3)).any().item<bool>()) << labels;
  EXPECT_TRUE(at::allclose(labels.sum(1), at::ones({labels.size(0)})));
}
