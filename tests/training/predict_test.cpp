// predict without a Trainer: same rows as Trainer::predict, mode restored, bad steps refused.
#include <gtest/gtest.h>

#include <limits>

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

TEST(Predict, NonFiniteOutputsAreANumericErrorNamingTheFirstSample) {
  at::manual_seed(4);
  Sequential model = torchfit::testing::tiny_mlp();
  {
    at::NoGradGuard no_grad;
    model->parameters()[2].fill_(std::numeric_limits<float>::quiet_NaN());  // dense_1's kernel
  }
  data::TensorIterator it(at::rand({10, 4}), at::zeros({10, 3}), 4);
  try {
    predict(*model, it);
    FAIL() << "NaN outputs were returned";
  } catch (const NumericError& e) {
    EXPECT_EQ(std::string(e.what()),
              "predict: the model's output for sample 0 is not finite (nan); its weights may hold NaN or inf "
              "(diverged training or a damaged checkpoint)");
  }
  // One non-finite input row: the error names that row, not the first one.
  at::Tensor x = at::rand({3, 4});
  {
    at::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.copy_(at::rand_like(p));
  }
  x[2][1] = std::numeric_limits<float>::infinity();
  try {
    predict(*model, x);
    FAIL() << "a non-finite output was returned";
  } catch (const NumericError& e) {
    EXPECT_NE(std::string(e.what()).find("output for sample 2 of the batch is not finite (nan)"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(predict(*model, x.slice(0, 0, 2)).sizes(), (at::IntArrayRef{2, 3})) << "finite rows pass";
}
