// Learning on real data: Trouser vs Bag from Debian's Fashion-MNIST reaches >= 90% validation accuracy.
#include <gtest/gtest.h>

#include <filesystem>

#include <torchfit/model/seed_cnn.h>
#include <torchfit/training/trainer.h>

#include "support/fashion_mnist.h"

using namespace torchfit;

namespace {
// Images of classes 1 (Trouser) and 8 (Bag), 2× downsampled to 14×14, as (N, 3, 14, 14) in 0..1.
std::pair<at::Tensor, at::Tensor> load(const std::string& prefix, int64_t limit) {
  auto [x, l] = torchfit::testing::fashion_mnist(prefix);
  auto keep = (l == 1).logical_or(l == 8).nonzero().squeeze(1).slice(0, 0, limit);
  x = at::avg_pool2d(x.index_select(0, keep), 2).expand({-1, 3, -1, -1}).contiguous();
  auto y = at::one_hot((l.index_select(0, keep) == 8).to(at::kLong), 2).to(at::kFloat);
  return {x, y};
}
}  // namespace

TEST(RealData, TrouserVsBagReaches90PercentInAFewDozenSteps) {
  if (!torchfit::testing::fashion_mnist_installed()) {
    GTEST_SKIP() << "Fashion-MNIST not installed (Debian package dataset-fashion-mnist)";
  }
  auto [xt, yt] = load("train", 32 * 40);
  auto [xv, yv] = load("t10k", 400);
  at::manual_seed(42);
  Trainer t(seed_cnn(14, 2, 64), CompileOptions().metrics({"categorical_accuracy"}));
  data::TensorIterator train(xt, yt, 32, true, 42);
  data::TensorIterator val(xv, yv, 100);
  auto h = t.fit(train, FitOptions().epochs(1).steps_per_epoch(40).validation_data(&val).verbose(0));
  EXPECT_GE(h.last("val_categorical_accuracy"), 0.90);
}
