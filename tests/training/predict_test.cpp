// predict without a Trainer: same rows as Trainer::predict, mode restored, bad steps refused.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/training/predict.h>
#include <torchfit/training/trainer.h>

#include "support/tiny_model.h"

using namespace torchfit;

TEST(Predict, NeedsNoOptimizerAndMatchesTrainerPredict) {
  at::manual_seed(4);
  Sequential model = torchfit::testing::tiny_mlp();
  auto x = at::rand({10, 4});
  data::TensorIterator it(x, at::zeros({10, 3}), 4);
  std::vector<int64_t> indices;
  model->train();
  const at::Tensor p = predict(*model, it, c10::Device(c10::kCPU), 0, &indices);
  EXPECT_TRUE(model->is_training()) << "the model's mode is put back";
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{10, 3}));
  EXPECT_EQ(indices, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(at::allclose(p.sum(1), at::ones({10})));
  Trainer t(model, CompileOptions());
  EXPECT_TRUE(at::equal(t.predict(it), p));
  EXPECT_TRUE(at::equal(predict(*model, x.slice(0, 0, 4)), p.slice(0, 0, 4)));
  EXPECT_THROW(predict(*model, it, c10::Device(c10::kCPU), -1), ConfigError);
}
