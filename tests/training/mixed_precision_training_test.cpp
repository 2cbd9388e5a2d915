// mixed_bfloat16 training: on real Fashion-MNIST (its own 28×28 gray images, 10 classes, 300 steps of 32) a
// small CNN's validation accuracy is within 2 points of float32's; a bf16 run resumed from its checkpoint
// continues exactly. The comparison is sized (~0.7 M multiply-adds per image) so that it stays quick where
// bfloat16 products are emulated (CPUs without AVX512-BF16 or AMX, or oneDNN capped below them with
// ONEDNN_MAX_CPU_ISA): its point is the numerics, not the speed.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/training/trainer.h>

#include "support/fashion_mnist.h"
#include "support/temp_dir.h"

using namespace torchfit;

namespace {
// The first `limit` images of a split as (N, 1, 28, 28) in 0..1, with one-hot labels (N, 10).
std::pair<at::Tensor, at::Tensor> load_fashion(const std::string& prefix, int64_t limit) {
  auto [x, l] = torchfit::testing::fashion_mnist(prefix);
  return {x.slice(0, 0, limit).contiguous(), at::one_hot(l.slice(0, 0, limit), 10).to(at::kFloat)};
}

struct Outcome {
  double accuracy, loss;
};

Outcome validation_result(const std::string& policy, const at::Tensor& xt, const at::Tensor& yt, const at::Tensor& xv,
                          const at::Tensor& yv) {
  at::manual_seed(42);  // the same initial weights and dropout stream for both policies
  Sequential model;     // the seed CNN's shape, narrower: conv 16, pool, conv 32, pool, dense 64, dense 10
  model->add(Conv2D(Conv2DOptions(16, 3).activation("relu").input_shape(Shape{28, 28, 1})));
  model->add(MaxPooling2D(MaxPooling2DOptions(2)));
  model->add(Conv2D(Conv2DOptions(32, 3).activation("relu")));
  model->add(MaxPooling2D(MaxPooling2DOptions(2)));
  model->add(Flatten());
  model->add(Dense(DenseOptions(64).activation("relu")));
  model->add(Dropout(DropoutOptions(0.2)));
  model->add(Dense(DenseOptions(10).activation("softmax")));
  model->set_dtype_policy(policy);
  Trainer t(model, CompileOptions().metrics({"categorical_accuracy"}));
  data::TensorIterator train(xt, yt, 32, true, 42);
  data::TensorIterator val(xv, yv, 250);
  auto h = t.fit(train, FitOptions().epochs(1).steps_per_epoch(300).validation_data(&val).verbose(0));
  return {h.last("val_categorical_accuracy"), h.last("val_loss")};
}

}  // namespace

TEST(MixedPrecisionTraining, Bfloat16ValidationAccuracyIsWithinTwoPointsOfFloat32OnFashionMnist) {
  if (!torchfit::testing::fashion_mnist_installed()) {
    GTEST_SKIP() << "Fashion-MNIST not installed (Debian package dataset-fashion-mnist)";
  }
  auto [xt, yt] = load_fashion("train", 32 * 300);
  auto [xv, yv] = load_fashion("t10k", 2000);
  const Outcome f = validation_result("float32", xt, yt, xv, yv);
  const Outcome b = validation_result("mixed_bfloat16", xt, yt, xv, yv);
  const double f32 = f.accuracy, bf16 = b.accuracy;
  std::cout << "after 300 steps: float32 val accuracy " << f32 << ", val loss " << f.loss
            << "; mixed_bfloat16 val accuracy " << bf16 << ", val loss " << b.loss << "\n";
  EXPECT_NE(f.loss, b.loss);  // two different computations
  RecordProperty("float32_val_accuracy", std::to_string(f32));
  RecordProperty("mixed_bfloat16_val_accuracy", std::to_string(bf16));
  EXPECT_GT(f32, 0.75);  // it learned (10 classes: chance is 0.10)
  EXPECT_NEAR(bf16, f32, 0.02);
}

TEST(MixedPrecisionTraining, ABfloat16RunResumedFromItsCheckpointContinuesExactly) {
  torchfit::testing::TempDir dir("bf16_resume");
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::rand({40, 3, 16, 16}, gen);
  const at::Tensor y = at::one_hot(at::arange(40) % 3, 3).to(at::kFloat);
  auto trainer = [] {
    at::manual_seed(11);
    Sequential m = seed_cnn(16, 3, 8);
    m->set_dtype_policy("mixed_bfloat16");
    return std::make_unique<Trainer>(m, CompileOptions());
  };
  const FitOptions opts = FitOptions().steps_per_epoch(4).verbose(0);
  auto whole = trainer();
  data::TensorIterator a(x, y, 8, true, 3);
  whole->fit(a, FitOptions(opts).epochs(2));

  auto first = trainer();
  data::TensorIterator b(x, y, 8, true, 3);
  first->fit(b, FitOptions(opts).epochs(1));
  const std::string ckpt = (dir.path / "bf16.ckpt").string();
  first->save_checkpoint(ckpt);
  auto resumed = trainer();
  data::TensorIterator c(x, y, 8, true, 3);
  resumed->fit(c, FitOptions(opts).epochs(2).resume_from(ckpt));

  auto pw = whole->model()->named_parameters();
  for (const auto& p : resumed->model()->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), at::kFloat);
    EXPECT_TRUE(at::equal(p.value(), pw[p.key()])) << p.key() << " differs after the resume";
  }
}
