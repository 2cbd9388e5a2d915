// Keras's classification metrics (precision, recall, auc, f1_score, top_k_categorical_accuracy) against
// scikit-learn and NumPy, computed at test time on the same predictions: per batch, accumulated over
// batches (the epoch value), from probabilities and from logits.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/training/metrics.h>

#include "support/python_reference.h"

using namespace torchfit;
using torchfit::testing::run_python;
using torchfit::testing::to_json;

namespace {

// scikit-learn for precision, recall and macro F1; NumPy for Keras's AUC formula (thresholds, counts,
// trapezoids written from Keras's documentation) and top-5 accuracy; sklearn's exact ROC AUC beside it.
const char* kMetricsReference = R"(
import numpy as np
from sklearn.metrics import precision_score, recall_score, f1_score, roc_auc_score
p = np.array(data["p"], dtype=np.float32); y = np.array(data["y"])
flat_true = y.ravel() > 0.5; flat_pred = p.ravel() > 0.5
eps = 1e-7
thr = np.array([0.0 - eps] + [(i + 1) / 199 for i in range(198)] + [1.0 + eps], dtype=np.float32)
pred = p.ravel()[None, :] > thr[:, None]
tp = (pred & flat_true).sum(1); fp = (pred & ~flat_true).sum(1)
fn = (~pred & flat_true).sum(1); tn = (~pred & ~flat_true).sum(1)
tpr = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), 0.0); fpr = np.where(fp + tn > 0, fp / np.maximum(fp + tn, 1), 0.0)
auc = float(np.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2))
top5 = np.argsort(-p, axis=1)[:, :5]
out = {"precision": precision_score(flat_true, flat_pred), "recall": recall_score(flat_true, flat_pred),
       "f1_score": f1_score(y.argmax(1), p.argmax(1), average="macro"), "auc": auc,
       "auc_exact": roc_auc_score(flat_true, p.ravel()),
       "top_k_categorical_accuracy": float(np.mean([y[i].argmax() in top5[i] for i in range(len(y))])),
       "accuracy": float(np.mean(y.argmax(1) == p.argmax(1)))}
)";

struct MetricBatch {
  at::Tensor logits, y;
};

MetricBatch make_metric_batch(int64_t n, int64_t k, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Tensor logits = at::randn({n, k}, gen) * 2.0;
  at::Tensor labels = at::randint(k, {n}, gen);
  // Labels correlated with the logits, so that the scores are neither 0 nor 1.
  logits.index_put_({at::arange(n), labels}, logits.index({at::arange(n), labels}) + 1.5);
  return {logits, at::one_hot(labels, k).to(at::kFloat)};
}

const std::vector<std::string> kNames = {"accuracy", "precision", "recall",
                                         "auc",      "f1_score",  "top_k_categorical_accuracy"};

void expect_reference(const Logs& got, const at::Tensor& p, const at::Tensor& y, const std::string& what) {
  const auto r = run_python({"numpy", "sklearn"}, kMetricsReference, {{"p", to_json(p)}, {"y", to_json(y)}});
  if (!r.skip.empty()) GTEST_SKIP() << r.skip;
  ASSERT_TRUE(r.error.empty()) << r.error;
  for (const auto& name : kNames) {
    // F1: Keras's formula carries ε = 1e-7 in three places; the others are exact ratios.
    const double tol = name == "f1_score" ? 1e-6 : 1e-12;
    EXPECT_NEAR(got.at(name), r.out.at(name).get<double>(), tol) << what << ": " << name;
  }
  // Keras's 200-threshold interpolation approximates the exact ROC AUC.
  EXPECT_NEAR(got.at("auc"), r.out.at("auc_exact").get<double>(), 5e-3) << what;
}

}  // namespace

TEST(Metrics, ClassificationMetricsEqualScikitLearnPerBatchAndOverBatches) {
  const int64_t k = 7;
  MetricSet metrics(kNames, "categorical_crossentropy", /*from_logits=*/false, k);
  std::vector<at::Tensor> ps, ys;
  std::vector<double> epoch(metrics.state_size(), 0.0);
  for (uint64_t b = 0; b < 3; ++b) {
    const MetricBatch batch = make_metric_batch(b == 2 ? 37 : 64, k, 100 + b);  // a short last batch
    const at::Tensor p = batch.logits.softmax(1);
    std::vector<double> one;
    metrics.update(p, batch.y, one);
    metrics.update(p, batch.y, epoch);
    if (b == 0) expect_reference(metrics.results(one), p, batch.y, "first batch");
    ps.push_back(p);
    ys.push_back(batch.y);
  }
  expect_reference(metrics.results(epoch), at::cat(ps), at::cat(ys), "three batches");
}

TEST(Metrics, LogitsGiveTheSameValuesAsProbabilities) {
  const MetricBatch batch = make_metric_batch(50, 4, 7);
  MetricSet from_p(kNames, "categorical_crossentropy", false, 4),
      from_logits(kNames, "categorical_crossentropy", true, 4);
  std::vector<double> a, b;
  from_p.update(batch.logits.softmax(1), batch.y, a);
  from_logits.update(batch.logits, batch.y, b);
  for (const auto& [name, value] : from_p.results(a)) EXPECT_NEAR(from_logits.results(b).at(name), value, 1e-6) << name;
}

TEST(Metrics, SparseTargetsAreOneHotEncoded) {
  const MetricBatch batch = make_metric_batch(40, 5, 9);
  MetricSet dense({"precision", "recall", "auc", "f1_score"}, "categorical_crossentropy", false, 5);
  MetricSet sparse({"precision", "recall", "auc", "f1_score"}, "sparse_categorical_crossentropy", false, 5);
  std::vector<double> a, b;
  dense.update(batch.logits.softmax(1), batch.y, a);
  sparse.update(batch.logits.softmax(1), batch.y.argmax(1), b);
  EXPECT_EQ(dense.results(a), sparse.results(b));
}

TEST(Metrics, KerasAucThresholds) {
  const auto t = auc_thresholds();
  ASSERT_EQ(t.size(), 200u);
  EXPECT_DOUBLE_EQ(t.front(), -1e-7);
  EXPECT_DOUBLE_EQ(t[1], 1.0 / 199);
  EXPECT_DOUBLE_EQ(t[198], 198.0 / 199);
  EXPECT_DOUBLE_EQ(t.back(), 1.0 + 1e-7);
}

TEST(Metrics, UnknownNameListsTheKnownOnes) {
  try {
    MetricSet({"precison"}, "categorical_crossentropy", false, 3);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown metric 'precison' (known: accuracy, acc, auc,"), std::string::npos) << msg;
    for (const char* known : {", precision,", ", recall,", ", f1_score,", ", top_k_categorical_accuracy,"}) {
      EXPECT_NE(msg.find(known), std::string::npos) << known << " in " << msg;
    }
  }
}

TEST(Metrics, ANameGivenTwiceIsRefused) {
  try {
    MetricSet({"accuracy", "auc", "accuracy"}, "categorical_crossentropy", false, 3);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "metric 'accuracy' is named twice");
  }
  EXPECT_NO_THROW(MetricSet({"accuracy", "categorical_accuracy"}, "categorical_crossentropy", false, 3));
}
