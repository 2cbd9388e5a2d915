// Losses and metrics: stable cross-entropy, Keras clipping, metric resolution.
#include <gtest/gtest.h>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/error.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>

#include "support/python_reference.h"

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
  // Sparse targets as floats: whole numbers are class ids (the same loss as int64 ids, by PyTorch's
  // cross-entropy −log softmax(z)[y]), a fraction is an error rather than a truncated class.
  const at::Tensor z = at::tensor({1.0f, 2.0f, 0.5f, -1.0f, 0.0f, 3.0f}).view({2, 3});
  const double want = -(z.log_softmax(1)[0][2] + z.log_softmax(1)[1][0]).item<double>() / 2;
  EXPECT_NEAR(compute_loss("sparse_categorical_crossentropy", z, at::tensor({2.0f, 0.0f}), true).item<double>(), want,
              1e-6);
  try {
    compute_loss("sparse_categorical_crossentropy", z, at::tensor({1.7f, 0.0f}), true);
    FAIL() << "a fractional class id was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("a target class id is 1.7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("not a whole number"), std::string::npos) << e.what();
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

// ---- Keras 3's loss catalogue (Loss, losses.h) against NumPy written from keras/src/losses/losses.py and
// keras/src/backend/numpy/nn.py (float64): each class's values and its reduction, on random inputs.
#include "support/python_reference.h"

namespace {

const char* kKerasLossesReference = R"PY(
import numpy as np
eps = 1e-7
def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
def sigmoid(x): return 1 / (1 + np.exp(-x))
def bce(t, o):  # ops.binary_crossentropy on probabilities
    o = np.clip(o, eps, 1 - eps); return -(t * np.log(o) + (1 - t) * np.log(1 - o))
def cce(t, o, logits):  # ops.categorical_crossentropy
    if logits:
        return -np.sum(t * (o - o.max(-1, keepdims=True) - np.log(np.exp(o - o.max(-1, keepdims=True)).sum(-1, keepdims=True))), -1)
    o = np.clip(o / o.sum(-1, keepdims=True), eps, 1 - eps); return -np.sum(t * np.log(o), -1)
def unit(x): return x / np.sqrt(np.maximum(np.sum(x * x, -1, keepdims=True), eps * eps))
def values(cls, c, y, p, logits):
    ls = c.get('label_smoothing', 0.0)
    if cls == 'MeanSquaredError': return np.mean((y - p) ** 2, -1)
    if cls == 'MeanAbsoluteError': return np.mean(np.abs(y - p), -1)
    if cls == 'MeanAbsolutePercentageError': return 100 * np.mean(np.abs((y - p) / np.maximum(np.abs(y), eps)), -1)
    if cls == 'MeanSquaredLogarithmicError':
        return np.mean((np.log(np.maximum(p, eps) + 1) - np.log(np.maximum(y, eps) + 1)) ** 2, -1)
    if cls == 'CosineSimilarity': return -np.sum(unit(y) * unit(p), -1)
    if cls == 'Huber':
        d = c.get('delta', 1.0); e = p - y
        return np.mean(np.where(np.abs(e) <= d, 0.5 * e * e, d * np.abs(e) - 0.5 * d * d), -1)
    if cls == 'LogCosh':
        e = p - y; return np.mean(e + np.log1p(np.exp(-2 * e)) - np.log(2.0), -1)
    if cls in ('Hinge', 'SquaredHinge'):
        t = 2 * y - 1 if np.all((y == 0) | (y == 1)) else y
        m = np.maximum(1 - t * p, 0); return np.mean(m * m if cls == 'SquaredHinge' else m, -1)
    if cls == 'CategoricalHinge':
        return np.maximum(np.max((1 - y) * p, -1) - np.sum(y * p, -1) + 1, 0)
    if cls == 'KLDivergence':
        t = np.clip(y, eps, 1); q = np.clip(p, eps, 1); return np.sum(t * np.log(t / q), -1)
    if cls == 'Poisson': return np.mean(p - y * np.log(p + eps), -1)
    if cls == 'BinaryCrossentropy':
        t = y * (1 - ls) + 0.5 * ls
        return np.mean(bce(t, sigmoid(p) if logits else p), -1)
    if cls == 'CategoricalCrossentropy':
        t = y * (1 - ls) + ls / p.shape[-1]; return cce(t, p, logits)
    if cls == 'SparseCategoricalCrossentropy':
        t = y.astype(int); k = p.shape[-1]
        ic = c.get('ignore_class')
        valid = np.ones(t.shape, bool) if ic is None else t != ic
        t = np.where(valid, t, 0)
        v = cce(np.eye(k)[t], p, logits)
        return np.where(valid, v, 0.0), valid
    if cls == 'BinaryFocalCrossentropy':
        t = y * (1 - ls) + 0.5 * ls; q = sigmoid(p) if logits else p
        pt = t * q + (1 - t) * (1 - q); f = (1 - pt) ** c.get('gamma', 2.0) * bce(t, q)
        if c.get('apply_class_balancing', False):
            a = c.get('alpha', 0.25); f = (t * a + (1 - t) * (1 - a)) * f
        return np.mean(f, -1)
    if cls == 'CategoricalFocalCrossentropy':
        t = y * (1 - ls) + ls / p.shape[-1]; q = softmax(p) if logits else p
        o = np.clip(q / q.sum(-1, keepdims=True), eps, 1 - eps)
        return np.sum(c.get('alpha', 0.25) * (1 - o) ** c.get('gamma', 2.0) * (-t * np.log(o)), -1)
    if cls == 'Dice':
        return 1 - 2 * np.sum(y * p) / (np.sum(y) + np.sum(p) + eps)
    if cls == 'Tversky':
        i = np.sum(p * y); fp = np.sum((1 - y) * p); fn = np.sum(y * (1 - p))
        return 1 - i / (i + fp * c.get('alpha', 0.5) + fn * c.get('beta', 0.5) + eps)
out = []
for case in data:
    c = case['config']; r = values(case['class'], c, np.array(case['y'], float), np.array(case['p'], float), case['logits'])
    valid = None
    if isinstance(r, tuple): r, valid = r
    red = c.get('reduction', 'sum_over_batch_size')
    if np.ndim(r) == 0: out.append(float(r)); continue
    if red == 'sum': out.append(float(r.sum())); continue
    n = r.size if valid is None else max(valid.sum(), 1)
    out.append(float(r.sum() / n))
)PY";

struct LossCase {
  const char* spec;  // what CompileOptions::loss holds
  const char* kind;  // "prob", "logit", "real", "positive", "sparse", "labels"
};

}  // namespace

TEST(KerasLosses, EveryClassMatchesNumpyFromKerasSource) {
  const std::vector<LossCase> cases = {
      {"mse", "real"},
      {"mae", "real"},
      {"mape", "real"},
      {"msle", "positive"},
      {"cosine_similarity", "real"},
      {"huber", "real"},
      {R"({"class_name": "Huber", "config": {"delta": 0.3, "reduction": "sum"}})", "real"},
      {"log_cosh", "real"},
      {"hinge", "labels"},
      {"squared_hinge", "labels"},
      {"SquaredHinge", "real"},
      {"categorical_hinge", "labels"},
      {"kld", "prob"},
      {"poisson", "positive"},
      {R"({"class_name": "BinaryCrossentropy", "config": {"label_smoothing": 0.2}})", "prob"},
      {R"({"class_name": "BinaryCrossentropy", "config": {"from_logits": true}})", "logit"},
      {R"({"class_name": "CategoricalCrossentropy", "config": {"label_smoothing": 0.1}})", "prob"},
      {R"({"class_name": "CategoricalCrossentropy", "config": {"from_logits": true}})", "logit"},
      {R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})", "sparse"},
      {R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true, "ignore_class": 2}})",
       "sparse"},
      {"binary_focal_crossentropy", "prob"},
      {R"({"class_name": "BinaryFocalCrossentropy", "config": {"apply_class_balancing": true, "alpha": 0.4,
           "gamma": 1.5, "from_logits": true, "label_smoothing": 0.1}})",
       "logit"},
      {"categorical_focal_crossentropy", "prob"},
      {R"({"class_name": "CategoricalFocalCrossentropy", "config": {"alpha": 0.5, "gamma": 3.0, "from_logits": true}})",
       "logit"},
      {"dice", "prob"},
      {R"({"class_name": "Tversky", "config": {"alpha": 0.7, "beta": 0.3}})", "prob"}};
  at::manual_seed(11);
  nlohmann::json input = nlohmann::json::array();
  std::vector<double> ours;
  for (const auto& c : cases) {
    const std::string kind = c.kind;
    at::Tensor p = kind == "prob"       ? at::rand({6, 4}) * 0.98 + 0.01
                   : kind == "positive" ? at::rand({6, 4}) * 3 + 0.1
                                        : at::randn({6, 4}) * 2;
    at::Tensor y = kind == "real"       ? at::randn({6, 4})
                   : kind == "positive" ? at::rand({6, 4}) * 3
                   : kind == "sparse"   ? at::randint(0, 4, {6}, at::kLong)
                                        : at::one_hot(at::randint(0, 4, {6}, at::kLong), 4).to(at::kFloat);
    if (std::string(c.spec) == "dice" || std::string(c.spec).find("Tversky") != std::string::npos) y = at::rand({6, 4});
    const Loss l = Loss::parse(c.spec);
    ours.push_back(compute_loss(c.spec, p, y, false).item<double>());
    input.push_back({{"class", l.class_name},
                     {"config", l.config},
                     {"logits", l.from_logits()},
                     {"p", torchfit::testing::to_json(p)},
                     {"y", torchfit::testing::to_json(y)}});
  }
  const auto ref = torchfit::testing::run_python({"numpy"}, kKerasLossesReference, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (size_t i = 0; i < cases.size(); ++i) {
    const double r = ref.out.at(i).get<double>();
    // float32 against float64; Keras 2.x's binary cross-entropy on probabilities adds ε inside the logs (1e-6).
    EXPECT_NEAR(ours[i], r, 2e-5 * std::max(1.0, std::abs(r))) << cases[i].spec;
  }
}

TEST(KerasLosses, NamesConfigsAndBadArgumentsAreReadAsKeras) {
  EXPECT_EQ(Loss::parse("mse").class_name, "MeanSquaredError");
  EXPECT_EQ(Loss::parse("CategoricalCrossentropy").keras_name(), "categorical_crossentropy");
  EXPECT_EQ(Loss::parse("kullback_leibler_divergence").class_name, "KLDivergence");
  EXPECT_TRUE(loss_uses_logits("CategoricalFocalCrossentropy", "softmax"));
  EXPECT_TRUE(loss_uses_logits("binary_focal_crossentropy", "sigmoid"));
  EXPECT_FALSE(
      loss_uses_logits(R"({"class_name": "CategoricalCrossentropy", "config": {"from_logits": true}})", "softmax"));
  EXPECT_FALSE(loss_uses_logits("huber", "softmax"));
  EXPECT_EQ(resolve_metric("accuracy", "SparseCategoricalCrossentropy"), "sparse_categorical_accuracy");
  EXPECT_EQ(resolve_metric("accuracy", "binary_focal_crossentropy"), "binary_accuracy");
  auto error = [](const std::string& spec) {
    try {
      check_loss(spec);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("hubber").find("unknown loss 'hubber' (known: "), std::string::npos);
  EXPECT_NE(error(R"({"class_name": "Huber", "config": {"delta": 0}})").find("loss Huber: delta must be > 0"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "Huber", "config": {"detla": 1}})").find("Huber takes no argument 'detla'"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "BinaryCrossentropy", "config": {"label_smoothing": 1.5}})")
                .find("label_smoothing must lie in [0, 1]"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "MeanSquaredError", "config": {"reduction": "none"}})")
                .find("reduction must be 'sum_over_batch_size', 'mean', 'sum' or 'mean_with_sample_weight'"),
            std::string::npos);
  EXPECT_NE(error(R"({"class_name": "Huber", "config": )").find("loss: not valid JSON"), std::string::npos);
  EXPECT_NE(error(R"({"class_name": "CategoricalCrossentropy", "config": {"axis": 1}})").find("axis must be -1"),
            std::string::npos);
  // A target that does not fit the output names both shapes.
  EXPECT_THROW(compute_loss("huber", at::zeros({2, 3}), at::zeros({2, 4}), false), ConfigError);
}

TEST(KerasLosses, SampleWeightsAndReductionsAsKeras) {
  const Loss l =
      Loss::parse(R"({"class_name": "MeanAbsoluteError", "config": {"reduction": "mean_with_sample_weight"}})");
  const at::Tensor v = at::tensor({1.0f, 2.0f, 4.0f});
  const at::Tensor w = at::tensor({1.0f, 0.0f, 3.0f});
  EXPECT_NEAR(l.reduce(v, w).item<double>(), (1.0 + 12.0) / 4.0, 1e-6);
  EXPECT_NEAR(Loss::parse("mae").reduce(v, w).item<double>(), 13.0 / 3.0, 1e-6);  // sum_over_batch_size
  EXPECT_NEAR(
      Loss::parse(R"({"class_name": "MeanAbsoluteError", "config": {"reduction": "sum"}})").reduce(v, w).item<double>(),
      13.0, 1e-6);
}

// Segmentation (Keras's per-pixel sample_weight): logits (N, C, H, W), class ids (N, H, W), weights (N, H, W):
// each pixel's loss times its weight, summed over every pixel's count (sum_over_batch_size) or over the
// weights (mean_with_sample_weight) — against PyTorch's per-pixel cross-entropy.
TEST(KerasLosses, PerPixelSampleWeightsWeighEachPixelAsPyTorch) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12);
  const at::Tensor z = at::randn({2, 3, 4, 5}, gen);
  const at::Tensor y = at::randint(3, {2, 4, 5}, gen);
  const at::Tensor w = at::rand({2, 4, 5}, gen) * 3;
  const double got = compute_loss("sparse_categorical_crossentropy", z, y, true, w).item<double>();
  const double by_weights =
      compute_loss(
          R"({"class_name": "SparseCategoricalCrossentropy", "config": {"reduction": "mean_with_sample_weight"}})", z,
          y, true, w)
          .item<double>();
  const auto r = torchfit::testing::run_python(
      {"torch"},
      "import torch\nz = torch.tensor(data['z']); y = torch.tensor(data['y']).long(); w = torch.tensor(data['w'])\n"
      "v = torch.nn.functional.cross_entropy(z, y, reduction='none') * w\n"
      "out = [(v.sum() / v.numel()).item(), (v.sum() / w.sum()).item()]\n",
      {{"z", torchfit::testing::to_json(z)},
       {"y", torchfit::testing::to_json(y)},
       {"w", torchfit::testing::to_json(w)}});
  TORCHFIT_REQUIRE_PYTHON(r);
  EXPECT_NEAR(got, r.out[0].get<double>(), 1e-6);
  EXPECT_NEAR(by_weights, r.out[1].get<double>(), 1e-6);
  EXPECT_GT(std::abs(got - compute_loss("sparse_categorical_crossentropy", z, y, true).item<double>()), 1e-3);
  try {
    compute_loss("sparse_categorical_crossentropy", z, y, true, at::ones({2, 3, 5}));
    ADD_FAILURE() << "weights that fit no pixel grid were taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("sample_weight (2, 3, 5) does not fit the loss's values (2, 4, 5)"),
              std::string::npos)
        << e.what();
  }
}
