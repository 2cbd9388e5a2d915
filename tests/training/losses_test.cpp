// Losses and metrics: stable cross-entropy, Keras clipping, metric resolution.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>

using namespace torchfit;

TEST(Losses, SoftmaxCrossEntropyThroughLogitsIsStable) {
  auto logits = at::tensor({1000.0f, 0.0f}).reshape({1, 2});
  auto target = at::tensor({0.0f, 1.0f}).reshape({1, 2});
  const double loss = compute_loss("categorical_crossentropy", logits, target, true).item<double>();
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, 1000.0, 1e-3);
  // From probabilities Keras clips at 1e-7: −log(1e-7) ≈ 16.118.
  auto probs = logits.softmax(1);
  EXPECT_NEAR(compute_loss("categorical_crossentropy", probs, target, false).item<double>(), -std::log(1e-7), 1e-3);
}

TEST(Losses, ValuesMatchDefinitions) {
  auto logits = at::tensor({2.0f, 1.0f, 0.1f, 0.5f, 2.5f, 0.3f}).reshape({2, 3});
  auto onehot = at::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}).reshape({2, 3});
  auto sparse = at::tensor({int64_t{0}, int64_t{2}});
  auto lsm = logits.log_softmax(1);
  const double expected = -(lsm[0][0].item<double>() + lsm[1][2].item<double>()) / 2;
  EXPECT_NEAR(compute_loss("categorical_crossentropy", logits, onehot, true).item<double>(), expected, 1e-6);
  EXPECT_NEAR(compute_loss("sparse_categorical_crossentropy", logits, sparse, true).item<double>(), expected, 1e-6);
  EXPECT_NEAR(compute_loss("sparse_categorical_crossentropy", logits.softmax(1), sparse, false).item<double>(),
              expected, 1e-5);
  auto z = at::tensor({0.0f, 3.0f}).reshape({2, 1});
  auto yb = at::tensor({1.0f, 0.0f}).reshape({2, 1});
  const double bce = (std::log(2.0) + std::log1p(std::exp(3.0))) / 2;
  EXPECT_NEAR(compute_loss("binary_crossentropy", z, yb, true).item<double>(), bce, 1e-5);
  EXPECT_NEAR(compute_loss("binary_crossentropy", z.sigmoid(), yb, false).item<double>(), bce, 1e-4);
  EXPECT_NEAR(compute_loss("mean_squared_error", onehot, at::zeros({2, 3}), false).item<double>(), 2.0 / 6, 1e-7);
}

// Golden values computed with Keras 2.x's backend formulas (numpy, float64): categorical divides the
// outputs by their sum before clipping; sparse normalises the clipped outputs; binary adds eps in the logs.
TEST(Losses, ProbabilityInputsFollowKerasFormulas) {
  // Four sigmoid outputs of exactly 0.5 (not a distribution): Keras gives ln 4, not ln 2.
  const auto half = at::full({2, 4}, 0.5f);
  const auto onehot4 = at::tensor({1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f}).reshape({2, 4});
  const auto sparse4 = at::tensor({int64_t{0}, int64_t{3}});
  EXPECT_NEAR(compute_loss("categorical_crossentropy", half, onehot4, false).item<double>(), 1.3862943611198906, 1e-6);
  EXPECT_NEAR(compute_loss("sparse_categorical_crossentropy", half, sparse4, false).item<double>(), 1.3862943611198906,
              1e-6);
  // Unnormalised rows with exact zeros and ones (clipping at 1e-7 decides the value).
  const auto out = at::tensor({0.2f, 0.9f, 0.4f, 0.0f, 1.0f, 0.0f}).reshape({2, 3});
  const auto onehot3 = at::tensor({0.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f}).reshape({2, 3});
  const auto sparse3 = at::tensor({int64_t{2}, int64_t{0}});
  EXPECT_NEAR(compute_loss("categorical_crossentropy", out, onehot3, false).item<double>(), 8.71992574547032, 1e-4);
  EXPECT_NEAR(compute_loss("sparse_categorical_crossentropy", out, sparse3, false).item<double>(), 8.719925795470317,
              1e-4);
  const auto p = at::tensor({0.0f, 1.0f, 0.5f, 0.9f}).reshape({4, 1});
  const auto y = at::tensor({1.0f, 1.0f, 0.0f, 1.0f}).reshape({4, 1});
  EXPECT_NEAR(compute_loss("binary_crossentropy", p, y, false).item<double>(), 4.0558639638762655, 1e-4);
}

TEST(Losses, BadNameAndShape) {
  EXPECT_THROW(check_loss("hinge2"), ConfigError);
  try {
    compute_loss("categorical_crossentropy", at::zeros({2, 3}), at::zeros({2}), true);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(2)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(2, 3)"), std::string::npos) << e.what();
  }
}

TEST(Metrics, ResolveAndCount) {
  EXPECT_EQ(resolve_metric("accuracy", "categorical_crossentropy"), "categorical_accuracy");
  EXPECT_EQ(resolve_metric("acc", "sparse_categorical_crossentropy"), "sparse_categorical_accuracy");
  EXPECT_EQ(resolve_metric("accuracy", "binary_crossentropy"), "binary_accuracy");
  EXPECT_THROW(resolve_metric("f1", "categorical_crossentropy"), ConfigError);
  auto out = at::tensor({0.1f, 0.9f, 0.0f, 0.8f, 0.1f, 0.1f, 0.2f, 0.3f, 0.5f}).reshape({3, 3});
  auto y = at::tensor({0.0f, 1.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 1.0f}).reshape({3, 3});
  EXPECT_EQ(metric_sum("categorical_accuracy", out, y, false), 2.0);
  EXPECT_EQ(metric_sum("sparse_categorical_accuracy", out, y.argmax(1), false), 2.0);
  EXPECT_EQ(metric_sum("top_k_categorical_accuracy", out, y, false), 3.0);  // k = min(5, K)
  EXPECT_EQ(metric_sum("binary_accuracy", at::tensor({0.7f, 0.2f}).reshape({2, 1}),
                       at::tensor({1.0f, 1.0f}).reshape({2, 1}), false),
            1.0);
}
