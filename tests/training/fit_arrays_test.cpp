// fit/evaluate/predict on in-memory arrays (Keras Model.fit(x, y, sample_weight=…, validation_split=…,
// class_weight=…)) against PyTorch-Python training the same weights on the same batches with SGD, and
// Keras 3's loss reductions with sample weights (keras/src/losses/loss.py reduce_weighted_values) in NumPy.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/data/arrays.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/python_reference.h"

namespace torchfit::fit_arrays_test {
using data::Arrays;

namespace {

struct StepLosses : Callback {
  std::vector<double> losses;
  std::vector<Logs> epochs;
  void on_train_batch_end(int64_t, const Logs& logs) override { losses.push_back(logs.at("batch_loss")); }
  void on_epoch_end(int, const Logs& logs) override { epochs.push_back(logs); }
};

nlohmann::json parameters_json(Model& model) {
  nlohmann::json p = nlohmann::json::array();
  for (const auto& t : model->parameters()) p.push_back(torchfit::testing::to_json(t.detach()));
  return p;
}

// PyTorch: the two-Dense model (kernels (units, in) as torchfit stores them), trained with SGD on the given
// batches; `loss` "mse" (mean over the last axis) or "sce" (sparse categorical cross-entropy on a softmax);
// each step's loss is Keras's sum_over_batch_size of the weighted values: Σ w·v / n.
const char* kTorchSteps = R"(
import torch
torch.set_default_dtype(torch.float32)
params = [torch.tensor(p, dtype=torch.float32, requires_grad=True) for p in data["params"]]
def forward(x):
    h = torch.relu(x @ params[0].T + params[1])
    return h @ params[2].T + params[3]
def values(out, y):
    if data["loss"] == "mse":
        return ((out - y) ** 2).mean(-1)
    return torch.nn.functional.cross_entropy(out, y.long(), reduction="none")
def weighted(out, y, w):
    return (values(out, y) * w).sum() / out.shape[0]
x, y, w = (torch.tensor(data[k], dtype=torch.float32) for k in ("x", "y", "w"))
opt = torch.optim.SGD(params, lr=data["lr"])
steps, epochs = [], []
for epoch in range(data["epochs"]):
    seen, total = 0, 0.0
    for idx in data["batches"]:
        opt.zero_grad()
        loss = weighted(forward(x[idx]), y[idx], w[idx])
        loss.backward()
        opt.step()
        steps.append(loss.item())
        total += loss.item() * len(idx); seen += len(idx)
    logs = {"loss": total / seen}
    if data["val"]:
        with torch.no_grad():
            vs, vn, vm = 0.0, 0, 0.0
            for idx in data["val"]:
                out = forward(x[idx])
                vs += weighted(out, y[idx], w[idx]).item() * len(idx); vn += len(idx)
                if data["loss"] == "mse":
                    vm += (out - y[idx]).abs().mean(-1).sum().item()
            logs["val_loss"] = vs / vn
            logs["val_mae"] = vm / vn
    epochs.append(logs)
out = {"steps": steps, "epochs": epochs}
)";

Sequential two_dense(int64_t in, int64_t hidden, int64_t out, const std::string& activation) {
  Sequential m;
  m->add(Dense(DenseOptions(hidden).activation("relu").input_shape(Shape{in})));
  m->add(Dense(DenseOptions(out).activation(activation)));
  return m;
}

std::vector<std::vector<int64_t>> ranges(int64_t begin, int64_t end, int64_t batch) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t b = begin; b < end; b += batch) {
    out.emplace_back();
    for (int64_t i = b; i < std::min(end, b + batch); ++i) out.back().push_back(i);
  }
  return out;
}

std::string config_error(const std::function<void()>& f) {
  return testing::error_message<ConfigError>(f, "ConfigError");
}

}  // namespace

TEST(FitArrays, WeightedRegressionWithValidationSplitMatchesPyTorch) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const at::Tensor x = at::randn({13, 3}, gen);
  const at::Tensor y = at::randn({13, 2}, gen);
  const at::Tensor w = at::rand({13}, gen) * 2;
  at::manual_seed(3);
  Trainer t(two_dense(3, 5, 2, "linear"), CompileOptions().loss("mse").metrics({"mae"}).optimizer(
                                              OptimizerOptions().name("sgd").learning_rate(0.05)));
  nlohmann::json input = {{"params", parameters_json(t.model())},
                          {"x", torchfit::testing::to_json(x)},
                          {"y", torchfit::testing::to_json(y)},
                          {"w", torchfit::testing::to_json(w)},
                          {"lr", 0.05},
                          {"epochs", 3},
                          {"loss", "mse"},
                          // validation_split 0.25 of 13: floor(13 · 0.75) = 9 train (batches 4, 4, 1), 4 validate
                          {"batches", ranges(0, 9, 4)},
                          {"val", ranges(9, 13, 4)}};
  auto steps = std::make_shared<StepLosses>();
  const History h = t.fit(Arrays(x, y, w), FitOptions().epochs(3).verbose(0).validation_split(0.25).callbacks({steps}),
                          ArrayOptions().batch_size(4).shuffle(false));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchSteps, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto want = ref.out["steps"].get<std::vector<double>>();
  ASSERT_EQ(steps->losses.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(steps->losses[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  ASSERT_EQ(steps->epochs.size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    for (const char* k : {"loss", "val_loss", "val_mae"}) {
      const double r = ref.out["epochs"][e][k].get<double>();
      EXPECT_NEAR(steps->epochs[e].at(k), r, 1e-5 * (1 + std::abs(r))) << "epoch " << e << " " << k;
    }
  }
  EXPECT_EQ(h.history.at("val_loss").size(), 3u);
  // evaluate on the validation part (the weights included) gives the last epoch's val_loss.
  const Logs ev = t.evaluate(Arrays(x.slice(0, 9, 13), y.slice(0, 9, 13), w.slice(0, 9, 13)), 4);
  EXPECT_NEAR(ev.at("loss"), ref.out["epochs"][2]["val_loss"].get<double>(), 1e-5);
  const at::Tensor p = t.predict(x, 5);
  EXPECT_EQ(p.sizes().vec(), (std::vector<int64_t>{13, 2}));
  EXPECT_TRUE(p.allclose(t.predict(x), 1e-6, 1e-6));
}

TEST(FitArrays, ClassWeightBecomesTheSampleWeightAsKeras3) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::randn({10, 4}, gen);
  const at::Tensor labels = at::tensor({0, 1, 2, 1, 0, 2, 2, 1, 0, 1}, at::kLong);
  at::manual_seed(4);
  Trainer t(two_dense(4, 6, 3, "softmax"), CompileOptions()
                                               .loss("sparse_categorical_crossentropy")
                                               .optimizer(OptimizerOptions().name("sgd").learning_rate(0.1)));
  const std::vector<double> cw = {1.0, 3.0, 0.5};
  std::vector<double> w;
  for (int64_t i = 0; i < 10; ++i) w.push_back(cw[labels[i].item<int64_t>()]);  // Keras: class_weight_to_sample_weights
  nlohmann::json input = {{"params", parameters_json(t.model())},
                          {"x", torchfit::testing::to_json(x)},
                          {"y", torchfit::testing::to_json(labels.to(at::kFloat))},
                          {"w", w},
                          {"lr", 0.1},
                          {"epochs", 2},
                          {"loss", "sce"},
                          {"batches", ranges(0, 10, 3)},
                          {"val", nlohmann::json::array()}};
  auto steps = std::make_shared<StepLosses>();
  t.fit(Arrays(x, labels),
        FitOptions().epochs(2).verbose(0).class_weight({{0, 1.0}, {1, 3.0}, {2, 0.5}}).callbacks({steps}),
        ArrayOptions().batch_size(3).shuffle(false));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchSteps, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto want = ref.out["steps"].get<std::vector<double>>();
  ASSERT_EQ(steps->losses.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(steps->losses[i], want[i], 1e-5) << i;
  // Keras 3 refuses both at once (array_data_adapter.py: "You cannot `class_weight` and `sample_weight` at the
  // same time.").
  const std::string both = config_error([&] {
    t.fit(Arrays(x, labels, at::ones({10})), FitOptions().verbose(0).class_weight({{0, 1.0}, {1, 3.0}, {2, 0.5}}));
  });
  EXPECT_NE(both.find("class_weight and sample_weight"), std::string::npos) << both;
}

TEST(FitArrays, LossReductionsWithSampleWeightsFollowKeras3) {
  // NumPy, from keras/src/losses/loss.py: values (N, T) after the loss's mean over the last axis; the
  // weights (N) or (N, 1) expanded/squeezed to their rank; sum_over_batch_size: Σ v·w / prod(v.shape);
  // sum: Σ v·w; mean_with_sample_weight: Σ v·w / Σ w.
  auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
  const at::Tensor out = at::randn({4, 3, 2}, gen), y = at::randn({4, 3, 2}, gen);
  const at::Tensor w = at::rand({4}, gen);
  const auto ref = torchfit::testing::run_python({"numpy"}, R"(
import numpy as np
p, y, w = (np.array(data[k], dtype=np.float32) for k in ("p", "y", "w"))
v = ((p - y) ** 2).mean(-1)                       # (N, T)
vw = v * w[:, None]
out = {"sum_over_batch_size": float(vw.sum() / v.size), "sum": float(vw.sum()),
       "mean_with_sample_weight": float(vw.sum() / np.broadcast_to(w[:, None], v.shape).sum())}
)",
                                                 {{"p", torchfit::testing::to_json(out)},
                                                  {"y", torchfit::testing::to_json(y)},
                                                  {"w", torchfit::testing::to_json(w)}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (const char* r : {"sum_over_batch_size", "sum", "mean_with_sample_weight"}) {
    const std::string loss =
        std::string(R"({"class_name": "MeanSquaredError", "config": {"reduction": ")") + r + "\"}}";
    const double want = ref.out[r].get<double>();
    EXPECT_NEAR(compute_loss(loss, out, y, false, w).item<double>(), want, 1e-5 * (1 + want)) << r;
    EXPECT_NEAR(compute_loss(loss, out, y, false, w.unsqueeze(1)).item<double>(), want, 1e-5 * (1 + want)) << r;
  }
  // Unweighted: the plain loss.
  EXPECT_NEAR(compute_loss("mse", out, y, false, at::Tensor()).item<double>(),
              compute_loss("mse", out, y, false).item<double>(), 1e-7);
}

TEST(FitArrays, BadInputGivesClearErrors) {
  at::manual_seed(1);
  Trainer t(two_dense(3, 4, 1, "linear"), CompileOptions().loss("mse"));
  const at::Tensor x = at::randn({10, 3}), y = at::randn({10, 1});
  auto fit_error = [&](const Arrays& a, const FitOptions& o, const ArrayOptions& ao = {}) {
    return config_error([&] { t.fit(a, FitOptions(o).verbose(0), ao); });
  };
  EXPECT_NE(fit_error(Arrays(x, y.slice(0, 0, 9)), {}).find("fit: x has 10 samples but y has 9"), std::string::npos);
  EXPECT_NE(fit_error(Arrays(x, y, at::ones({11})), {}).find("sample_weight has 11"), std::string::npos);
  EXPECT_NE(fit_error(Arrays(x, y), FitOptions().validation_split(1.0)).find("(0, 1)"), std::string::npos);
  EXPECT_NE(fit_error(Arrays(x, y), FitOptions().validation_split(-0.1)).find("(0, 1)"), std::string::npos);
  // floor(10 · 0.05) = 0 training samples; 1 − 1e-17 is 1 in double: no validation sample (Keras refuses both).
  EXPECT_NE(fit_error(Arrays(x, y), FitOptions().validation_split(0.95)).find("not sufficient"), std::string::npos);
  EXPECT_NE(fit_error(Arrays(x, y), FitOptions().validation_split(1e-17)).find("not sufficient"), std::string::npos);
  EXPECT_NE(fit_error(Arrays(x, y), {}, ArrayOptions().batch_size(0)).find("batch_size"), std::string::npos);
  const std::string val = fit_error(Arrays(x, y), {}, ArrayOptions().validation_data(Arrays(x, y.slice(0, 0, 3))));
  EXPECT_NE(val.find("fit: validation_data: x has 10 samples but y has 3"), std::string::npos) << val;
  data::TensorIterator other(x, y, 5);
  const std::string twice =
      fit_error(Arrays(x, y), FitOptions().validation_data(&other), ArrayOptions().validation_data(Arrays(x, y)));
  EXPECT_NE(twice.find("validation_data"), std::string::npos) << twice;
  // A source that cannot split: validation_split needs in-memory arrays (Keras: "only supported for tensors or
  // NumPy arrays").
  struct Stream : data::BatchIterator {
    data::Batch next() override { return {}; }
    int64_t samples() const override { return 4; }
    int64_t batch_size() const override { return 2; }
    void reset() override {}
  } stream;
  const std::string split = config_error([&] { t.fit(stream, FitOptions().verbose(0).validation_split(0.2)); });
  EXPECT_NE(split.find("in-memory"), std::string::npos) << split;
  EXPECT_NE(config_error([&] { t.evaluate(Arrays(x, y.slice(0, 0, 2))); }).find("evaluate: x has 10 samples"),
            std::string::npos);
}

TEST(FitArrays, ShuffledFitTrainsAndSplitsBeforeShuffling) {
  // The validation part is the last fraction whatever the shuffling: with validation_split 0.5 and the
  // training half's targets 0 and the validation half's 100, a model trained only on the first half has
  // a val_loss near 100² and a loss near 0 after training.
  at::manual_seed(2);
  Trainer t(two_dense(1, 4, 1, "linear"),
            CompileOptions().loss("mse").optimizer(OptimizerOptions().name("sgd").learning_rate(0.05)));
  const at::Tensor x = at::ones({20, 1});
  const at::Tensor y = at::cat({at::zeros({10, 1}), at::full({10, 1}, 100.0)});
  const History h = t.fit(Arrays(x, y), FitOptions().epochs(30).verbose(0).validation_split(0.5),
                          ArrayOptions().batch_size(3).shuffle(true).seed(9));
  EXPECT_LT(h.last("loss"), 1e-2);
  EXPECT_NEAR(h.last("val_loss"), 10000.0, 50.0);
}

}  // namespace torchfit::fit_arrays_test
