// Keras 3's metrics catalogue (MetricSet with Keras names and metric objects) against NumPy written from
// Keras's source and scikit-learn: tests/training/reference/keras_metrics_reference.py, run at test time on
// the same predictions. Every metric is computed from two batches added up and from one batch of both.
#include <gtest/gtest.h>

#include <cmath>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/error.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/python_reference.h"
#include "support/tiny_model.h"

using namespace torchfit;
using torchfit::testing::run_python;
using torchfit::testing::to_json;
using Json = nlohmann::json;

namespace {

// A data set: the model's output (probabilities), the target as the loader hands it, the loss compiled.
struct MetricData {
  at::Tensor p, y;
  std::string loss;
};

std::map<std::string, MetricData> make_metric_data() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2024);
  const int64_t n = 61;
  std::map<std::string, MetricData> d;
  at::Tensor logits = at::randn({n, 5}, gen) * 1.5;
  const at::Tensor labels = at::randint(5, {n}, gen);
  logits.index_put_({at::arange(n), labels}, logits.index({at::arange(n), labels}) + 1.2);  // informative
  d["classes"] = {logits.softmax(1), at::one_hot(labels, 5).to(at::kFloat), "categorical_crossentropy"};
  d["sparse"] = {logits.softmax(1), labels, "sparse_categorical_crossentropy"};
  const at::Tensor ml = at::randn({n, 4}, gen);
  const at::Tensor hits = (ml + at::randn({n, 4}, gen)).gt(0).to(at::kFloat);
  d["multilabel"] = {ml.sigmoid(), hits, "binary_crossentropy"};
  d["binary"] = {ml.select(1, 0).unsqueeze(1).sigmoid(), hits.select(1, 0), "binary_crossentropy"};
  const at::Tensor y = at::rand({n, 3}, gen) * 2.5 + 0.5;
  d["regression"] = {(y + at::randn({n, 3}, gen) * 0.4).clamp_min(0.05), y, "mse"};
  return d;
}

struct MetricCase {
  std::string spec, data, log_name;
};

Json metric_object(const std::string& cls, const Json& config = Json::object()) {
  return Json{{"class_name", cls}, {"config", config}};
}

// (metric entry, data set, expected log name)
std::vector<MetricCase> metric_cases() {
  std::vector<MetricCase> c = {
      {"mse", "regression", "mse"},
      {"MeanSquaredError", "regression", "MeanSquaredError"},
      {"root_mean_squared_error", "regression", "root_mean_squared_error"},
      {"mae", "regression", "mae"},
      {"MAPE", "regression", "MAPE"},
      {"msle", "regression", "msle"},
      {"log_cosh_error", "regression", "log_cosh_error"},
      {"cosine_similarity", "regression", "cosine_similarity"},
      {"poisson", "regression", "poisson"},
      {metric_object("R2Score").dump(), "regression", "r2_score"},
      {metric_object("R2Score", {{"class_aggregation", "variance_weighted_average"}, {"name", "r2w"}}).dump(),
       "regression", "r2w"},
      {metric_object("R2Score", {{"class_aggregation", nullptr}, {"name", "r2"}}).dump(), "regression", "r2"},
      {metric_object("R2Score", {{"num_regressors", 2}, {"name", "r2_adjusted"}}).dump(), "regression", "r2_adjusted"},
      {metric_object("LogCoshError").dump(), "regression", "logcosh"},
      {"categorical_crossentropy", "classes", "categorical_crossentropy"},
      {metric_object("CategoricalCrossentropy", {{"label_smoothing", 0.1}, {"name", "cce_smooth"}}).dump(), "classes",
       "cce_smooth"},
      {"kl_divergence", "classes", "kl_divergence"},
      {"hinge", "classes", "hinge"},
      {"squared_hinge", "classes", "squared_hinge"},
      {"categorical_hinge", "classes", "categorical_hinge"},
      {"bce", "multilabel", "bce"},
      {metric_object("BinaryCrossentropy", {{"label_smoothing", 0.2}}).dump(), "multilabel", "binary_crossentropy"},
      {"binary_accuracy", "multilabel", "binary_accuracy"},
      {metric_object("BinaryAccuracy", {{"threshold", 0.7}}).dump(), "multilabel", "binary_accuracy"},
      {"sparse_categorical_crossentropy", "sparse", "sparse_categorical_crossentropy"},
      {metric_object("SparseCategoricalCrossentropy", {{"ignore_class", 2}, {"name", "scce"}}).dump(), "sparse",
       "scce"},
      {"sparse_categorical_accuracy", "sparse", "sparse_categorical_accuracy"},
      {metric_object("SparseTopKCategoricalAccuracy", {{"k", 2}}).dump(), "sparse",
       "sparse_top_k_categorical_accuracy"},
      {"categorical_accuracy", "classes", "categorical_accuracy"},
      {metric_object("TopKCategoricalAccuracy", {{"k", 2}, {"name", "top2"}}).dump(), "classes", "top2"},
      {"top_k_categorical_accuracy", "classes", "top_k_categorical_accuracy"},
      {"precision", "classes", "precision"},
      {metric_object("Precision", {{"thresholds", 0.3}}).dump(), "classes", "precision"},
      {metric_object("Precision", {{"thresholds", {0.6, 0.2}}}).dump(), "classes", "precision"},
      {metric_object("Precision", {{"top_k", 2}}).dump(), "classes", "precision"},
      {metric_object("Precision", {{"class_id", 1}}).dump(), "classes", "precision"},
      {metric_object("Recall", {{"top_k", 1}, {"class_id", 2}}).dump(), "classes", "recall"},
      {metric_object("Recall", {{"thresholds", 0.25}}).dump(), "classes", "recall"},
      {"true_positives", "classes", "true_positives"},
      {metric_object("TrueNegatives", {{"thresholds", {0.1, 0.5}}}).dump(), "classes", "true_negatives"},
      {"FalsePositives", "classes", "FalsePositives"},
      {"false_negatives", "classes", "false_negatives"},
      {"auc", "classes", "auc"},
      {metric_object("AUC", {{"curve", "PR"}}).dump(), "classes", "auc"},
      {metric_object("AUC", {{"curve", "PR"}, {"summation_method", "minoring"}}).dump(), "classes", "auc"},
      {metric_object("AUC", {{"summation_method", "majoring"}, {"num_thresholds", 50}}).dump(), "classes", "auc"},
      {metric_object("AUC", {{"curve", "PRGAIN"}}).dump(), "classes", "auc"},
      {metric_object("AUC", {{"thresholds", {0.9, 0.1, 0.3, 0.5}}}).dump(), "classes", "auc"},
      {metric_object("AUC", {{"multi_label", true}}).dump(), "multilabel", "auc"},
      {metric_object("AUC", {{"multi_label", true}, {"label_weights", {1.0, 2.0, 0.5, 1.0}}}).dump(), "multilabel",
       "auc"},
      {metric_object("AUC", {{"label_weights", {1.0, 2.0, 0.5, 1.0}}}).dump(), "multilabel", "auc"},
      {metric_object("AUC", {{"from_logits", true}, {"curve", "pr"}}).dump(), "multilabel", "auc"},
      {metric_object("PrecisionAtRecall", {{"recall", 0.6}}).dump(), "multilabel", "precision_at_recall"},
      {metric_object("RecallAtPrecision", {{"precision", 0.7}, {"num_thresholds", 100}}).dump(), "multilabel",
       "recall_at_precision"},
      {metric_object("SensitivityAtSpecificity", {{"specificity", 0.5}, {"class_id", 1}}).dump(), "multilabel",
       "sensitivity_at_specificity"},
      {metric_object("SpecificityAtSensitivity", {{"sensitivity", 0.8}}).dump(), "multilabel",
       "specificity_at_sensitivity"},
      {metric_object("SpecificityAtSensitivity", {{"sensitivity", 0.4}, {"num_thresholds", 1}}).dump(), "multilabel",
       "specificity_at_sensitivity"},
      {metric_object("F1Score").dump(), "classes", "f1_score"},
      {metric_object("F1Score", {{"average", "micro"}}).dump(), "classes", "f1_score"},
      {metric_object("F1Score", {{"average", "macro"}}).dump(), "classes", "f1_score"},
      {metric_object("F1Score", {{"average", "weighted"}}).dump(), "classes", "f1_score"},
      {metric_object("FBetaScore", {{"beta", 2.0}, {"average", "macro"}, {"threshold", 0.3}}).dump(), "classes",
       "fbeta_score"},
      {metric_object("FBetaScore", {{"beta", 0.5}, {"average", "weighted"}, {"threshold", 0.4}}).dump(), "classes",
       "fbeta_score"},
      {metric_object("F1Score", {{"average", "micro"}, {"threshold", 0.5}}).dump(), "multilabel", "f1_score"},
      {metric_object("FBetaScore", {{"beta", 2.0}, {"threshold", 0.5}}).dump(), "multilabel", "fbeta_score"},
      {"f1_score", "classes", "f1_score"},
      {metric_object("OneHotMeanIoU", {{"num_classes", 5}}).dump(), "classes", "one_hot_mean_io_u"},
      {metric_object("OneHotIoU", {{"num_classes", 5}, {"target_class_ids", {0, 3}}}).dump(), "classes",
       "one_hot_io_u"},
      {metric_object("MeanIoU", {{"num_classes", 5}, {"sparse_y_pred", false}}).dump(), "sparse", "mean_io_u"},
      {metric_object("IoU", {{"num_classes", 5}, {"target_class_ids", {1, 2}}, {"sparse_y_pred", false}}).dump(),
       "sparse", "io_u"},
      {metric_object("MeanIoU", {{"num_classes", 5}, {"sparse_y_pred", false}, {"ignore_class", 0}}).dump(), "sparse",
       "mean_io_u"},
      {metric_object("BinaryIoU").dump(), "binary", "binary_io_u"},
      {metric_object("BinaryIoU", {{"threshold", 0.3}, {"target_class_ids", {1}}}).dump(), "binary", "binary_io_u"},
  };
  return c;
}

// The reference's request: each case's class and config (a Keras name read as its class), on its data.
Json metric_reference_case(const MetricCase& c) {
  if (c.spec.front() == '{') {
    Json j = Json::parse(c.spec);
    j["data"] = c.data;
    return j;
  }
  static const std::map<std::string, Json> by_name = {
      {"mse", metric_object("MeanSquaredError")},
      {"MeanSquaredError", metric_object("MeanSquaredError")},
      {"root_mean_squared_error", metric_object("RootMeanSquaredError")},
      {"mae", metric_object("MeanAbsoluteError")},
      {"MAPE", metric_object("MeanAbsolutePercentageError")},
      {"msle", metric_object("MeanSquaredLogarithmicError")},
      {"log_cosh_error", metric_object("LogCoshError")},
      {"cosine_similarity", metric_object("CosineSimilarity")},
      {"poisson", metric_object("Poisson")},
      {"categorical_crossentropy", metric_object("CategoricalCrossentropy")},
      {"kl_divergence", metric_object("KLDivergence")},
      {"hinge", metric_object("Hinge")},
      {"squared_hinge", metric_object("SquaredHinge")},
      {"categorical_hinge", metric_object("CategoricalHinge")},
      {"bce", metric_object("BinaryCrossentropy")},
      {"binary_accuracy", metric_object("BinaryAccuracy")},
      {"sparse_categorical_crossentropy", metric_object("SparseCategoricalCrossentropy")},
      {"sparse_categorical_accuracy", metric_object("SparseCategoricalAccuracy")},
      {"categorical_accuracy", metric_object("CategoricalAccuracy")},
      {"top_k_categorical_accuracy", metric_object("TopKCategoricalAccuracy")},
      {"precision", metric_object("Precision")},
      {"true_positives", metric_object("TruePositives")},
      {"FalsePositives", metric_object("FalsePositives")},
      {"false_negatives", metric_object("FalseNegatives")},
      {"auc", metric_object("AUC")},
      {"f1_score", metric_object("F1Score", {{"average", "macro"}})},  // torchfit's one number for the name
  };
  Json j = by_name.at(c.spec);
  j["data"] = c.data;
  return j;
}

// The values of one metric in `logs` (name, or name_0 … for a vector) as JSON (a number or a list).
Json logged_values(const Logs& logs, const std::string& name) {
  if (logs.count(name)) return logs.at(name);
  Json v = Json::array();
  for (size_t i = 0; logs.count(name + "_" + std::to_string(i)); ++i)
    v.push_back(logs.at(name + "_" + std::to_string(i)));
  return v;
}

void expect_metric_close(const Json& got, const Json& want, double tol, const std::string& what) {
  if (want.is_array()) {
    ASSERT_TRUE(got.is_array() && got.size() == want.size())
        << what << ": got " << got.dump() << ", want " << want.dump();
    for (size_t i = 0; i < want.size(); ++i)
      expect_metric_close(got[i], want[i], tol, what + "[" + std::to_string(i) + "]");
    return;
  }
  ASSERT_TRUE(got.is_number()) << what << ": got " << got.dump() << ", want " << want.dump();
  const double g = got.get<double>(), w = want.get<double>();
  EXPECT_NEAR(g, w, tol * std::max(1.0, std::abs(w))) << what;
}

struct ComputedMetric {
  Logs two_batches, one_batch;
  std::vector<std::string> names;
};

ComputedMetric compute_metric(const MetricCase& c, const MetricData& d, bool logits = false) {
  const int64_t k = d.p.dim() > 1 ? d.p.size(1) : 1;
  MetricSet m({c.spec}, d.loss, logits, k);
  at::Tensor out = d.p;
  if (logits) out = d.loss == "binary_crossentropy" ? at::logit(d.p) : d.p.log();
  std::vector<double> two, one;
  m.update(out.slice(0, 0, 23), d.y.slice(0, 0, 23), two);
  m.update(out.slice(0, 23), d.y.slice(0, 23), two);
  m.update(out, d.y, one);
  return {m.results(two), m.results(one), m.names()};
}

// Tolerances of scikit-learn's value against Keras's: AUC's 200 thresholds approximate the exact ROC AUC;
// PR AUC (interpolated) is not scikit-learn's step-wise average precision; Keras's ε = 1e-7 in the F-scores and
// IoU; scikit-learn's log_loss clips by the float64 epsilon.
double metric_sklearn_tolerance(const Json& ref_case) {
  const std::string cls = ref_case["class_name"];
  if (cls == "AUC") return ref_case["config"].value("curve", std::string("ROC")) == "PR" ? 0.05 : 5e-3;
  if (cls == "CategoricalCrossentropy") return 1e-4;
  return 1e-5;
}

// tests/training/reference/keras_metrics_reference.py's compute(request), run by Debian's Python.
torchfit::testing::PythonResult keras_reference(const Json& request, const std::vector<std::string>& modules = {
                                                                         "numpy", "sklearn", "importlib.util"}) {
  const std::string script = std::string(TORCHFIT_SOURCE_DIR) + "/tests/training/reference/keras_metrics_reference.py";
  return run_python(modules,
                    "spec = importlib.util.spec_from_file_location('ref', '" + script +
                        "')\nref = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(ref)\n"
                        "out = ref.compute(data)\n",
                    request);
}

}  // namespace

TEST(KerasMetrics, EveryMetricEqualsKerasAndScikitLearnOverTwoBatchesAndOne) {
  const auto data = make_metric_data();
  const auto all = metric_cases();
  Json request{{"data", Json::object()}, {"cases", Json::array()}};
  for (const auto& [name, d] : data) {
    const at::Tensor ref_true = d.loss == "sparse_categorical_crossentropy" ? d.y : d.y.reshape({d.y.size(0), -1});
    request["data"][name] = {{"y_true", to_json(ref_true)}, {"y_pred", to_json(d.p)}};
  }
  for (const auto& c : all) request["cases"].push_back(metric_reference_case(c));
  const auto r = keras_reference(request);
  TORCHFIT_REQUIRE_PYTHON(r);
  for (size_t i = 0; i < all.size(); ++i) {
    const MetricCase& c = all[i];
    const std::string what = c.spec + " on " + c.data;
    const ComputedMetric got = compute_metric(c, data.at(c.data));
    const Json keras = r.out["keras"][i], sklearn = r.out["sklearn"][i];
    const size_t columns = keras.is_array() ? keras.size() : 1;
    ASSERT_EQ(got.names.size(), columns) << what;
    EXPECT_EQ(got.names[0], columns == 1 ? c.log_name : c.log_name + "_0") << what;
    // float32 model outputs: means and R2 to float32 rounding; counts and ratios of counts exactly.
    expect_metric_close(logged_values(got.two_batches, c.log_name), keras, 2e-6, what + " (two batches vs Keras)");
    expect_metric_close(logged_values(got.two_batches, c.log_name), logged_values(got.one_batch, c.log_name), 1e-6,
                        what + " (streaming)");
    if (!sklearn.is_null()) {
      expect_metric_close(logged_values(got.two_batches, c.log_name), sklearn,
                          metric_sklearn_tolerance(request["cases"][i]), what + " (vs scikit-learn)");
    }
  }
}

// Keras's weighted_metrics: every metric of the catalogue with sample weights (N) in [0, 2), a few of them 0,
// against the reference's weighted formulas and scikit-learn's sample_weight.
TEST(KerasMetrics, EveryMetricWeighedBySampleWeightsEqualsKerasAndScikitLearn) {
  const auto data = make_metric_data();
  const auto all = metric_cases();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(77);
  std::map<std::string, at::Tensor> weights;
  Json request{{"data", Json::object()}, {"cases", Json::array()}};
  for (const auto& [name, d] : data) {
    at::Tensor w = at::rand({d.p.size(0)}, gen) * 2;
    w.index_put_({at::arange(0, d.p.size(0), 7)}, 0.0);  // zero weights drop their samples
    weights[name] = w;
    const at::Tensor ref_true = d.loss == "sparse_categorical_crossentropy" ? d.y : d.y.reshape({d.y.size(0), -1});
    request["data"][name] = {{"y_true", to_json(ref_true)}, {"y_pred", to_json(d.p)}, {"sample_weight", to_json(w)}};
  }
  for (const auto& c : all) {
    Json j = metric_reference_case(c);
    j["weighted"] = true;
    request["cases"].push_back(j);
  }
  const auto r = keras_reference(request);
  TORCHFIT_REQUIRE_PYTHON(r);
  size_t differ = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    const MetricCase& c = all[i];
    const std::string what = c.spec + " on " + c.data + " (weighted)";
    const MetricData& d = data.at(c.data);
    const at::Tensor& w = weights.at(c.data);
    MetricSet m({c.spec}, d.loss, false, d.p.size(1));
    std::vector<double> two, one;
    m.update(d.p.slice(0, 0, 23), d.y.slice(0, 0, 23), two, w.slice(0, 0, 23));
    m.update(d.p.slice(0, 23), d.y.slice(0, 23), two, w.slice(0, 23));
    m.update(d.p, d.y, one, w);
    const Json got = logged_values(m.results(two), c.log_name);
    expect_metric_close(got, r.out["keras"][i], 2e-6, what + " vs Keras");
    expect_metric_close(got, logged_values(m.results(one), c.log_name), 1e-6, what + " (streaming)");
    if (!r.out["sklearn"][i].is_null()) {
      expect_metric_close(got, r.out["sklearn"][i], metric_sklearn_tolerance(request["cases"][i]),
                          what + " vs scikit-learn");
    }
    std::vector<double> plain;
    m.update(d.p, d.y, plain);
    differ += logged_values(m.results(plain), c.log_name) != got ? 1 : 0;
  }
  EXPECT_GT(differ, all.size() * 3 / 4) << "the weights change almost every metric";
}

// Per-pixel weights (N, H, W) on images (N, C, H, W): a weighted accuracy and MeanIoU against the
// reference on the flattened pixels with each pixel's weight.
TEST(KerasMetrics, PerPixelSampleWeightsWeighEachPixel) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor p = at::randn({3, 4, 5, 6}, gen).softmax(1);
  const at::Tensor y = at::randint(4, {3, 5, 6}, gen);
  const at::Tensor w = at::rand({3, 5, 6}, gen);
  const Json iou = metric_object("MeanIoU", {{"num_classes", 4}, {"sparse_y_pred", false}});
  MetricSet m({"accuracy", iou.dump()}, "sparse_categorical_crossentropy", false, 4);
  std::vector<double> state;
  m.update(p, y, state, w);
  const Logs got = m.results(state);
  const at::Tensor rows = p.movedim(1, -1).reshape({-1, 4});
  Json request{{"data",
                {{"px",
                  {{"y_true", to_json(y.reshape({-1}))},
                   {"y_pred", to_json(rows)},
                   {"sample_weight", to_json(w.reshape({-1}))}}}}},
               {"cases",
                {{{"class_name", "SparseCategoricalAccuracy"}, {"data", "px"}, {"weighted", true}},
                 {{"class_name", "MeanIoU"}, {"config", iou["config"]}, {"data", "px"}, {"weighted", true}}}}};
  const auto r = keras_reference(request, {"numpy", "importlib.util"});
  TORCHFIT_REQUIRE_PYTHON(r);
  // Keras's Mean: each image's mean of w·v over its mean w; equal pixel counts make it Σ w·v / Σ w.
  EXPECT_NEAR(got.at("accuracy"), r.out["keras"][0].get<double>(), 2e-6);
  EXPECT_NEAR(got.at("mean_io_u"), r.out["keras"][1].get<double>(), 2e-6);
  std::vector<double> unweighted;
  m.update(p, y, unweighted);
  EXPECT_GT(std::abs(m.results(unweighted).at("accuracy") - got.at("accuracy")), 1e-4);
  // Weights of another shape name both shapes.
  std::vector<double> bad;
  const std::string e = torchfit::testing::error_message<ConfigError>([&] { m.update(p, y, bad, at::ones({3, 7})); });
  EXPECT_NE(e.find("sample_weight (3, 7) does not fit the output (3, 4, 5, 6)"), std::string::npos) << e;
}

TEST(KerasMetrics, LogitsFromTheTrainerGiveTheValuesOfTheProbabilities) {
  const auto data = make_metric_data();
  for (const auto& c : metric_cases()) {
    if (c.data == "regression") continue;  // the trainer hands logits only to cross-entropy losses
    const MetricData& d = data.at(c.data);
    const ComputedMetric p = compute_metric(c, d, false), l = compute_metric(c, d, true);
    expect_metric_close(logged_values(l.two_batches, c.log_name), logged_values(p.two_batches, c.log_name), 1e-5,
                        c.spec + " on " + c.data);
  }
}

namespace {
std::string metric_config_error(const std::vector<std::string>& names, int64_t outputs = 3) {
  try {
    MetricSet m(names, "categorical_crossentropy", false, outputs);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(KerasMetrics, UnknownMetricsAndBadOptionsAreConfigErrorsNamingThem) {
  const auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "'" << part << "' not in: " << msg;
  };
  EXPECT_TRUE(has(metric_config_error({"rmse"}), "unknown metric 'rmse'"));  // not a Keras 3 name
  EXPECT_TRUE(has(metric_config_error({"rmse"}), "root_mean_squared_error"));
  EXPECT_TRUE(has(metric_config_error({metric_object("Precison").dump()}), "unknown metric 'Precison'"));
  EXPECT_TRUE(has(metric_config_error({"{\"class_name\": \"AUC\""}), "metric: not valid JSON"));
  EXPECT_TRUE(has(metric_config_error({metric_object("Precision", {{"bogus", 1}}).dump()}),
                  "metric Precision takes no argument 'bogus'"));
  EXPECT_TRUE(has(metric_config_error({metric_object("Precision", {{"thresholds", 1.5}}).dump()}),
                  "metric Precision: thresholds"));
  EXPECT_TRUE(has(metric_config_error({metric_object("Precision", {{"top_k", 0}}).dump()}), "metric Precision: top_k"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("AUC", {{"curve", "XYZ"}}).dump()}), "metric AUC: curve must be one of"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("AUC", {{"num_thresholds", 1}}).dump()}), "metric AUC: num_thresholds"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("AUC", {{"num_labels", 3}}).dump()}), "num_labels is needed only"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("F1Score", {{"average", "samples"}}).dump()}), "metric F1Score: average"));
  EXPECT_TRUE(has(metric_config_error({metric_object("FBetaScore", {{"beta", 0}}).dump()}), "metric FBetaScore: beta"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("F1Score", {{"threshold", 1.5}}).dump()}), "metric F1Score: threshold"));
  EXPECT_TRUE(has(metric_config_error({metric_object("R2Score", {{"class_aggregation", "x"}}).dump()}),
                  "metric R2Score: class_aggregation"));
  EXPECT_TRUE(has(metric_config_error({metric_object("R2Score", {{"num_regressors", -1}}).dump()}),
                  "metric R2Score: num_regressors"));
  EXPECT_TRUE(has(metric_config_error({metric_object("PrecisionAtRecall").dump()}),
                  "metric PrecisionAtRecall: needs its argument recall"));
  EXPECT_TRUE(has(metric_config_error({metric_object("RecallAtPrecision", {{"precision", 2}}).dump()}),
                  "metric RecallAtPrecision: precision must lie in [0.0, 1.0], got 2"));
  EXPECT_TRUE(has(metric_config_error({metric_object("IoU", {{"num_classes", 3}}).dump()}),
                  "metric IoU: needs its argument target_class_ids"));
  EXPECT_TRUE(has(metric_config_error({metric_object("IoU", {{"num_classes", 3}, {"target_class_ids", {3}}}).dump()}),
                  "metric IoU: target_class_ids must lie in [0, 3)"));
  EXPECT_TRUE(
      has(metric_config_error({metric_object("MeanIoU").dump()}), "metric MeanIoU: needs its argument num_classes"));
  EXPECT_TRUE(has(metric_config_error({metric_object("TopKCategoricalAccuracy", {{"k", 1.5}}).dump()}),
                  "metric TopKCategoricalAccuracy: k must be an integer"));
  EXPECT_TRUE(has(metric_config_error({metric_object("BinaryCrossentropy", {{"label_smoothing", 2}}).dump()}),
                  "metric BinaryCrossentropy: loss BinaryCrossentropy: label_smoothing"));
  EXPECT_TRUE(
      has(metric_config_error({"precision", metric_object("Precision").dump()}), "metric 'precision' is named twice"));
  EXPECT_TRUE(has(metric_config_error(
                      {metric_object("F1Score").dump(), metric_object("Precision", {{"name", "f1_score_1"}}).dump()}),
                  "metric 'f1_score_1' is named twice"));
  // A sparse target outside the outputs, for a metric that reads one-hot targets.
  MetricSet sparse({"precision"}, "sparse_categorical_crossentropy", false, 3);
  std::vector<double> state;
  try {
    sparse.update(at::rand({2, 3}), at::tensor({0, 3}, at::kLong), state);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has(e.what(), "a sparse target's class lies outside the 3 outputs (min 0, max 3)"));
  }
  // A class_id outside the outputs: at the first batch, naming the metric.
  MetricSet m({metric_object("Recall", {{"class_id", 7}}).dump()}, "categorical_crossentropy", false, 3);
  std::vector<double> s;
  try {
    m.update(at::rand({4, 3}), at::eye(3).index({at::tensor({0, 1, 2, 0}, at::kLong)}), s);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_TRUE(has(e.what(), "metric Recall: class_id 7 outside the 3 outputs"));
  }
}

TEST(KerasMetrics, EveryKerasNameIsAccepted) {
  const auto names = metric_names();
  EXPECT_EQ(names.size(), 2u + 2u * 39u + 10u);  // accuracy, acc; 39 classes and their snake_case; 10 aliases
  for (const auto& n : names) {
    const bool binary_iou = n == "BinaryIoU" || n == "binary_io_u";  // the one IoU without required arguments
    const bool needs_options =
        (!binary_iou && (n.find("IoU") != std::string::npos || n.find("io_u") != std::string::npos)) ||
        n.find("At") != std::string::npos || n.find("_at_") != std::string::npos;
    if (needs_options) {
      EXPECT_NE(metric_config_error({n}, 4).find("needs its argument"), std::string::npos) << n;
    } else {
      EXPECT_NO_THROW(MetricSet({n}, "categorical_crossentropy", false, 4)) << n;
    }
  }
}

// compile(metrics=…) with metric objects: the trainer logs them under Keras's names (one column per element of a
// vector value) and evaluate() gives the values of MetricSet over the model's predictions (its softmax output;
// the trainer hands the logits).
TEST(KerasMetrics, TheTrainerLogsMetricObjectsUnderKerasNames) {
  at::manual_seed(3);
  const at::Tensor x = at::randn({20, 4});
  const at::Tensor y = at::one_hot(at::arange(20) % 3, 3).to(at::kFloat);
  const std::vector<std::string> metrics = {metric_object("F1Score").dump(),
                                            metric_object("Precision", {{"thresholds", 0.3}, {"name", "p03"}}).dump(),
                                            "mse", metric_object("OneHotMeanIoU", {{"num_classes", 3}}).dump()};
  Trainer t(torchfit::testing::tiny_mlp(4, 3), CompileOptions().loss("categorical_crossentropy").metrics(metrics));
  EXPECT_EQ(t.metric_names(),
            (std::vector<std::string>{"f1_score_0", "f1_score_1", "f1_score_2", "p03", "mse", "one_hot_mean_io_u"}));
  data::TensorIterator it(x, y, 8);
  const Logs logs = t.evaluate(it);
  MetricSet m(metrics, "categorical_crossentropy", false, 3);
  std::vector<double> s;
  m.update(t.predict(x), y, s);
  for (const auto& [name, value] : m.results(s)) EXPECT_NEAR(logs.at(name), value, 1e-6) << name;
}

// Images (N, C, H, W) hold their classes on axis 1 (Keras's last axis): every metric reads them as the rows
// (N·H·W, C) that the reference test checks, with sparse (N, H, W) or one-hot targets.
TEST(KerasMetrics, ImagesAreReadWithTheirClassesOnAxisOne) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const at::Tensor p = (at::randn({3, 4, 5, 6}, gen) * 2).softmax(1);  // (N, C, H, W)
  const at::Tensor ids = at::randint(4, {3, 5, 6}, gen);
  const at::Tensor rows = p.permute({0, 2, 3, 1}).reshape({-1, 4}), row_ids = ids.reshape({-1});
  const std::vector<std::string> names = {
      "categorical_accuracy",
      "precision",
      "auc",
      metric_object("OneHotMeanIoU", {{"num_classes", 4}}).dump(),
      metric_object("MeanIoU", {{"num_classes", 4}, {"sparse_y_pred", false}}).dump(),
      metric_object("F1Score", {{"average", "macro"}}).dump(),
      "categorical_crossentropy"};
  MetricSet images(names, "sparse_categorical_crossentropy", false, 4),
      flat(names, "sparse_categorical_crossentropy", false, 4);
  std::vector<double> a, b;
  images.update(p, ids, a);
  flat.update(rows, row_ids, b);
  const Logs got = images.results(a), want = flat.results(b);
  ASSERT_EQ(got.size(), names.size());
  for (const auto& [name, value] : want) EXPECT_NEAR(got.at(name), value, 1e-6) << name;
}
