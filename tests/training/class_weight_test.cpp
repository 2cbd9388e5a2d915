// class_weight: scikit-learn's "balanced" weights and Keras's weighted loss (each sample's loss times its
// class's weight, the sum divided by the batch size) against PyTorch's per-sample losses.
#include <gtest/gtest.h>

#include <fstream>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/error.h>
#include <torchfit/training/class_weight.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/trainer.h>

#include "support/python_reference.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;

TEST(ClassWeight, BalancedEqualsScikitLearn) {
  const std::vector<int64_t> labels = {0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 0, 1};
  const auto w = balanced_class_weight(labels, 3);
  const auto r = torchfit::testing::run_python(
      {"numpy", "sklearn.utils.class_weight"},
      "import numpy as np\nfrom sklearn.utils.class_weight import compute_class_weight\n"
      "y = np.array(data['y'])\nout = compute_class_weight('balanced', classes=np.unique(y), y=y).tolist()\n",
      {{"y", labels}});
  TORCHFIT_REQUIRE_PYTHON(r);
  for (int64_t c = 0; c < 3; ++c) EXPECT_NEAR(w.at(c), r.out[c].get<double>(), 1e-15) << c;
  EXPECT_THROW(balanced_class_weight({0, 0, 1}, 3), ConfigError);  // class 2 has no samples
}

TEST(ClassWeight, WeightedLossesEqualPyTorchsPerSampleLosses) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(4);
  const at::Tensor logits = at::randn({9, 3}, gen);
  const at::Tensor labels = at::randint(3, {9}, gen);
  const at::Tensor onehot = at::one_hot(labels, 3).to(at::kFloat);
  const at::Tensor weights = at::tensor({0.5, 2.0, 1.25}, at::kFloat);
  const double categorical =
      compute_weighted_loss("categorical_crossentropy", logits, onehot, true, weights).item<double>();
  const double from_p =
      compute_weighted_loss("categorical_crossentropy", logits.softmax(1), onehot, false, weights).item<double>();
  const double sparse =
      compute_weighted_loss("sparse_categorical_crossentropy", logits, labels, true, weights).item<double>();
  const at::Tensor logit1 = logits.select(1, 0).unsqueeze(1), y1 = (labels % 2).to(at::kFloat).unsqueeze(1);
  const double binary =
      compute_weighted_loss("binary_crossentropy", logit1, y1, true, weights.slice(0, 0, 2)).item<double>();
  const auto r = torchfit::testing::run_python(
      {"torch"},
      "import torch\nimport torch.nn.functional as F\n"
      "x = torch.tensor(data['x']); y = torch.tensor(data['y']).long(); w = torch.tensor(data['w'])\n"
      "ce = (F.cross_entropy(x, y, reduction='none') * w[y]).sum() / len(y)\n"
      "yb = (y % 2).float()\n"
      "bce = (F.binary_cross_entropy_with_logits(x[:, 0], yb, reduction='none') * w[:2][y % 2]).sum() / len(y)\n"
      "out = {'ce': ce.item(), 'bce': bce.item()}\n",
      {{"x", torchfit::testing::to_json(logits)},
       {"y", torchfit::testing::to_json(labels)},
       {"w", torchfit::testing::to_json(weights)}});
  TORCHFIT_REQUIRE_PYTHON(r);
  EXPECT_NEAR(categorical, r.out["ce"].get<double>(), 1e-6);
  EXPECT_NEAR(from_p, r.out["ce"].get<double>(), 1e-5);
  EXPECT_NEAR(sparse, r.out["ce"].get<double>(), 1e-6);
  EXPECT_NEAR(binary, r.out["bce"].get<double>(), 1e-6);
  // All weights 1: the unweighted loss.
  EXPECT_NEAR(compute_weighted_loss("categorical_crossentropy", logits, onehot, true, at::ones({3})).item<double>(),
              compute_loss("categorical_crossentropy", logits, onehot, true).item<double>(), 1e-6);
}

TEST(ClassWeight, FitTrainsOnTheWeightedLossAndRecordsTheWeights) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
  const at::Tensor x = at::randn({16, 4}, gen);
  const at::Tensor y = at::one_hot(at::arange(16) % 3, 3).to(at::kFloat);
  at::manual_seed(1);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions().optimizer(OptimizerOptions().name("sgd")));
  // The first step's loss is computed before the update: the weighted loss of the initial weights.
  const at::Tensor expected = compute_weighted_loss("categorical_crossentropy", t.model()->forward_logits(x), y, true,
                                                    at::tensor({1.0, 3.0, 0.5}, at::kFloat));
  struct First : Callback {
    double loss = -1;
    void on_train_batch_end(int64_t b, const Logs& logs) override {
      if (loss < 0) loss = logs.at("batch_loss");
    }
  };
  auto first = std::make_shared<First>();
  data::TensorIterator train(x, y, 16, false, 0);
  t.fit(train, FitOptions().epochs(1).verbose(0).class_weight({{0, 1.0}, {1, 3.0}, {2, 0.5}}).callbacks({first}));
  EXPECT_NEAR(first->loss, expected.item<double>(), 1e-6);
  EXPECT_EQ(t.class_weight(), (std::vector<double>{1.0, 3.0, 0.5}));
  EXPECT_THROW(t.fit(train, FitOptions().verbose(0).class_weight({{0, 1.0}, {1, 3.0}})), ConfigError);
}

// Keras 3 turns class_weight into sample weights, so weighted_metrics see them while training (and
// validation, without class weights, does not): one full batch, its accuracy before the update.
TEST(ClassWeight, WeightedMetricsSeeTheClassWeightsAsSampleWeights) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const at::Tensor x = at::randn({16, 4}, gen);
  const at::Tensor labels = at::arange(16) % 3;
  const at::Tensor y = at::one_hot(labels, 3).to(at::kFloat);
  at::manual_seed(2);
  Trainer t(
      torchfit::testing::tiny_mlp(),
      CompileOptions().optimizer(OptimizerOptions().name("sgd")).metrics({"accuracy"}).weighted_metrics({"accuracy"}));
  EXPECT_EQ(t.metric_names(), (std::vector<std::string>{"accuracy", "weighted_accuracy"}));
  const at::Tensor hit = t.model()->forward_logits(x).argmax(1).eq(labels).to(at::kDouble);
  const at::Tensor cw = at::tensor({1.0, 3.0, 0.5}, at::kDouble).index_select(0, labels);
  struct Last : Callback {
    Logs logs;
    void on_epoch_end(int, const Logs& l) override { logs = l; }
  };
  auto last = std::make_shared<Last>();
  data::TensorIterator train(x, y, 16, false, 0), val(x, y, 16, false, 0);
  t.fit(train, FitOptions()
                   .epochs(1)
                   .verbose(0)
                   .class_weight({{0, 1.0}, {1, 3.0}, {2, 0.5}})
                   .callbacks({last})
                   .validation_data(&val));
  EXPECT_NEAR(last->logs.at("accuracy"), hit.mean().item<double>(), 1e-12);
  EXPECT_NEAR(last->logs.at("weighted_accuracy"), (hit * cw).sum().item<double>() / cw.sum().item<double>(), 1e-12);
  EXPECT_NE(last->logs.at("weighted_accuracy"), last->logs.at("accuracy"));
  EXPECT_EQ(last->logs.at("val_weighted_accuracy"), last->logs.at("val_accuracy"));  // no weights there
  // Masks hold a class per pixel: Keras 3 refuses class_weight for them (3+ dimensional targets).
  try {
    class_sample_weight("sparse_categorical_crossentropy", at::zeros({2, 3, 3}, at::kLong), at::ones({2}));
    ADD_FAILURE() << "class_weight took per-pixel targets";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("not supported for 3+ dimensional targets"), std::string::npos) << e.what();
  }
}

TEST(ClassWeight, JsonFileByNameOrIndex) {
  torchfit::testing::TempDir dir("class_weight");
  std::ofstream(dir.file("w.json")) << R"({"cat": 1.5, "1": 4})";
  const auto w = read_class_weight(dir.file("w.json"), {{"cat", 0}, {"dog", 1}});
  EXPECT_EQ(w, (std::map<int64_t, double>{{0, 1.5}, {1, 4.0}}));
  std::ofstream(dir.file("bad.json")) << R"({"cat": 1.5})";
  try {
    read_class_weight(dir.file("bad.json"), {{"cat", 0}, {"dog", 1}});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no weight for class 'dog'"), std::string::npos) << e.what();
  }
}

TEST(ClassWeight, BadFilesNameTheClassOrValue) {
  torchfit::testing::TempDir dir("class_weight_bad");
  const std::map<std::string, int64_t> classes = {{"cat", 0}, {"dog", 1}};
  auto error_of = [&](const std::string& path) -> std::string {
    try {
      read_class_weight(path, classes);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  EXPECT_NE(error_of(file("twice.json", R"({"cat": 1, "0": 2, "dog": 1})")).find("class 0 ('cat') is named twice"),
            std::string::npos);
  EXPECT_NE(error_of(file("zero.json", R"({"cat": 0, "dog": 0})")).find("every weight is 0"), std::string::npos);
  EXPECT_NE(error_of(file("huge.json", R"({"cat": 1e308, "dog": 1})")).find("weight of 'cat' is 1e+308"),
            std::string::npos)
      << error_of(dir.file("huge.json"));
  EXPECT_NE(error_of(file("neg.json", R"({"cat": -1, "dog": 1})")).find("weight of 'cat'"), std::string::npos);
  EXPECT_NE(error_of(dir.str()).find("is a directory"), std::string::npos) << error_of(dir.str());
  EXPECT_NE(error_of(dir.file("missing.json")).find("(No such file or directory)"), std::string::npos);
}

TEST(ClassWeight, SpecIsBalancedOrAFileAndTheVectorHasEveryClass) {
  torchfit::testing::TempDir dir("class_weight_spec");
  const std::map<std::string, int64_t> classes = {{"cat", 0}, {"dog", 1}};
  // balanced over labels {0, 0, 0, 1}: scikit-learn's n / (k · count) = 4 / (2·3), 4 / (2·1).
  const auto balanced = class_weight_from_spec("balanced", {0, 0, 0, 1}, classes);
  EXPECT_NEAR(balanced.at(0), 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(balanced.at(1), 2.0, 1e-12);
  std::ofstream(dir.file("w.json")) << R"({"cat": 1.5, "dog": 3})";
  EXPECT_EQ(class_weight_from_spec(dir.file("w.json"), {}, classes), (std::map<int64_t, double>{{0, 1.5}, {1, 3.0}}));
  for (const std::string bad : {"", "Balanced", "BALANCED"}) {
    try {
      class_weight_from_spec(bad, {0, 1}, classes);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("is neither balanced (lower case) nor a JSON file"), std::string::npos);
    }
  }
  EXPECT_EQ(class_weight_vector({{0, 1.5}, {1, 3.0}}, 2), (std::vector<double>{1.5, 3.0}));
  const auto error_of = [](const std::map<int64_t, double>& w, int64_t k) -> std::string {
    try {
      class_weight_vector(w, k);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of({{0, 1.0}}, 2), "class_weight has no weight for class 1");
  EXPECT_EQ(error_of({{0, 1.0}, {1, -2.0}}, 2), "class_weight of class 1 must be a finite number >= 0");
  EXPECT_EQ(error_of({{0, 1.0}, {1, 1.0}, {2, 1.0}}, 2), "class_weight names class 2, the model has 2 classes");
  EXPECT_EQ(error_of({{-1, 1.0}, {0, 1.0}, {1, 1.0}}, 2), "class_weight names class -1, the model has 2 classes");
}
