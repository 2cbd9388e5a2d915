// A user's own loss and metric (custom_objects.h: register_loss, register_metric — Keras's custom_objects):
// trained with sample weights and validation against PyTorch-Python computing the same formulas on the same
// batches with SGD; named in checkpoints and weighted_metrics; the registry's errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/data/arrays.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/custom_objects.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/python_reference.h"

namespace torchfit::custom_objects_test {
using data::Arrays;

namespace {

// The user's loss: Σ over the last axis of scale·(y − p)⁴ per sample ("scale" from its config, default 1).
at::Tensor quartic(const at::Tensor& y, const at::Tensor& p, const nlohmann::json& config) {
  return (y - p).pow(4).sum(-1) * config.value("scale", 1.0);
}

// The user's metric: the weighted mean of max_k |y − p| per sample, as sums [Σ w·max, Σ w].
class MaxAbsError : public Metric {
 public:
  size_t state_size() const override { return 2; }
  void update_state(const at::Tensor& y, const at::Tensor& p, const at::Tensor& w, double* s) const override {
    const at::Tensor m = (y - p).abs().amax(-1).to(at::kDouble);
    const at::Tensor weights = w.defined() ? w.reshape({-1}).to(at::kDouble) : at::ones_like(m);
    s[0] += (m * weights).sum().item<double>();
    s[1] += weights.sum().item<double>();
  }
  std::vector<double> result(const double* s) const override {
    return {s[1] > 0 ? s[0] / s[1] : std::numeric_limits<double>::quiet_NaN()};
  }
};

// Registered once per test binary (the registry is process-wide and refuses a second registration).
void register_once() {
  static const bool done = [] {
    register_loss("Quartic", quartic);
    register_metric(
        "MaxAbsError", [](const nlohmann::json&) { return std::make_unique<MaxAbsError>(); }, "max_abs_error");
    return true;
  }();
  (void)done;
}

Sequential two_dense() {
  Sequential m;
  m->add(Dense(DenseOptions(5).activation("relu").input_shape(Shape{3})));
  m->add(Dense(DenseOptions(2)));
  return m;
}

nlohmann::json parameters_json(Model& model) {
  nlohmann::json p = nlohmann::json::array();
  for (const auto& t : model->parameters()) p.push_back(torchfit::testing::to_json(t.detach()));
  return p;
}

struct StepLosses : Callback {
  std::vector<double> losses;
  std::vector<Logs> epochs;
  void on_train_batch_end(int64_t, const Logs& logs) override { losses.push_back(logs.at("batch_loss")); }
  void on_epoch_end(int, const Logs& logs) override { epochs.push_back(logs); }
};

// PyTorch: the same two Dense layers (kernels (units, in)), SGD on the given batches; the step loss is
// Keras's sum_over_batch_size of the weighted quartic values (Σ w·v / n); validation's loss and the
// weighted max-abs-error metric at each epoch's end.
const char* kTorchSteps = R"(
import torch
params = [torch.tensor(p, dtype=torch.float32, requires_grad=True) for p in data["params"]]
def forward(x):
    return torch.relu(x @ params[0].T + params[1]) @ params[2].T + params[3]
def loss(out, y, w):
    return (data["scale"] * ((y - out) ** 4).sum(-1) * w).sum() / out.shape[0]
x, y, w = (torch.tensor(data[k], dtype=torch.float32) for k in ("x", "y", "w"))
opt = torch.optim.SGD(params, lr=data["lr"])
steps, epochs = [], []
for epoch in range(data["epochs"]):
    for idx in data["batches"]:
        opt.zero_grad()
        l = loss(forward(x[idx]), y[idx], w[idx])
        l.backward()
        opt.step()
        steps.append(l.item())
    with torch.no_grad():
        v = data["val"]
        out = forward(x[v])
        m = (y[v] - out).abs().amax(-1)
        epochs.append({"val_loss": loss(out, y[v], w[v]).item(),
                       "val_max_abs_error": ((m * w[v]).sum() / w[v].sum()).item()})
out = {"steps": steps, "epochs": epochs}
)";

std::string config_error(const std::function<void()>& f) {
  return testing::error_message<ConfigError>(f, "ConfigError");
}

}  // namespace

// compile(loss={"class_name": "Quartic", "config": {"scale": 0.5}}, weighted_metrics=["MaxAbsError"]) on
// arrays with sample weights and validation_split: every step loss, val_loss and the weighted metric as
// PyTorch computes them.
TEST(CustomObjects, UserLossAndMetricTrainAsPyTorchComputesThem) {
  register_once();
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const at::Tensor x = at::randn({12, 3}, gen);
  const at::Tensor y = at::randn({12, 2}, gen);
  const at::Tensor w = at::rand({12}, gen) * 2;
  at::manual_seed(5);
  Trainer t(two_dense(), CompileOptions()
                             .loss(R"({"class_name": "Quartic", "config": {"scale": 0.5}})")
                             .weighted_metrics(nlohmann::json::array({"MaxAbsError"}))
                             .optimizer(OptimizerOptions().name("sgd").learning_rate(0.01)));
  const nlohmann::json input = {{"params", parameters_json(t.model())},
                                {"x", torchfit::testing::to_json(x)},
                                {"y", torchfit::testing::to_json(y)},
                                {"w", torchfit::testing::to_json(w)},
                                {"lr", 0.01},
                                {"scale", 0.5},
                                {"epochs", 2},
                                // validation_split 0.25 of 12: the first 9 train (batches of 4, 4, 1), 3 validate
                                {"batches", {{0, 1, 2, 3}, {4, 5, 6, 7}, {8}}},
                                {"val", {9, 10, 11}}};
  auto rec = std::make_shared<StepLosses>();
  t.fit(Arrays(x, y, w), FitOptions().epochs(2).verbose(0).validation_split(0.25).callbacks({rec}),
        ArrayOptions().batch_size(4).shuffle(false));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchSteps, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto want = ref.out["steps"].get<std::vector<double>>();
  ASSERT_EQ(rec->losses.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(rec->losses[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  ASSERT_EQ(rec->epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    for (const char* k : {"val_loss", "val_max_abs_error"}) {
      const double r = ref.out["epochs"][e][k].get<double>();
      ASSERT_TRUE(rec->epochs[e].count(k)) << k;
      EXPECT_NEAR(rec->epochs[e].at(k), r, 1e-5 * (1 + std::abs(r))) << "epoch " << e << " " << k;
    }
  }
  EXPECT_TRUE(rec->epochs[0].count("max_abs_error")) << "the training metric is logged too";
  EXPECT_GT(std::abs(want.front() - want.back()), 1e-3) << "the loss should change over the steps";
}

// The plain string names work where Keras's names do, and each loss value is the user's formula reduced as
// Keras reduces (sum_over_batch_size; "sum" given in the config).
TEST(CustomObjects, RegisteredNamesWorkWhereKerasNamesDo) {
  register_once();
  const at::Tensor p = at::tensor({0.5f, 1.0f, -1.0f, 2.0f}).view({2, 2});
  const at::Tensor y = at::zeros({2, 2});
  const double per_sample[2] = {std::pow(0.5, 4) + 1.0, 1.0 + 16.0};
  EXPECT_NEAR(compute_loss("Quartic", p, y, false).item<double>(), (per_sample[0] + per_sample[1]) / 2, 1e-6);
  EXPECT_NEAR(compute_loss(R"({"class_name": "Quartic", "config": {"reduction": "sum", "scale": 2}})", p, y, false)
                  .item<double>(),
              2 * (per_sample[0] + per_sample[1]), 1e-5);
  EXPECT_EQ(Loss::parse("Quartic").keras_name(), "Quartic");
  EXPECT_FALSE(loss_uses_logits("Quartic", "softmax")) << "a user loss gets the output, not logits";
  EXPECT_EQ(resolve_metric("MaxAbsError", "mse"), "max_abs_error");
  EXPECT_EQ(resolve_metric(R"({"class_name": "MaxAbsError", "config": {"name": "worst"}})", "mse"), "worst");
  MetricSet set({"MaxAbsError"}, "mse", false, 2);
  std::vector<double> state;
  set.update(p, y, state);
  EXPECT_NEAR(set.results(state).at("max_abs_error"), (1.0 + 2.0) / 2, 1e-9);
}

TEST(CustomObjects, RegistryErrorsNameTheObject) {
  register_once();
  EXPECT_NE(config_error([] { register_loss("Quartic", quartic); }).find("'Quartic' is registered already"),
            std::string::npos);
  EXPECT_NE(config_error([] { register_loss("mse", quartic); }).find("'mse' is a Keras loss"), std::string::npos);
  EXPECT_NE(config_error([] { register_loss("", quartic); }).find("the class name is empty"), std::string::npos);
  EXPECT_NE(config_error([] { register_loss("Empty", LossFunction()); }).find("the function of 'Empty' is empty"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              register_metric("AUC", [](const nlohmann::json&) { return std::make_unique<MaxAbsError>(); });
            }).find("'AUC' is a Keras metric"),
            std::string::npos);
  const std::string unknown = config_error([] { Loss::parse("Quartik"); });
  EXPECT_NE(unknown.find("unknown loss 'Quartik'"), std::string::npos);
  EXPECT_NE(unknown.find("Quartic"), std::string::npos) << "the registered names are listed";
  EXPECT_NE(unknown.find("register_loss"), std::string::npos);
  EXPECT_NE(config_error([] { resolve_metric("MaxAbsErr", "mse"); }).find("register_metric"), std::string::npos);
  // A function that returns one value for the whole batch of 2 … as (1): not per sample, not a scalar.
  static const bool bad = [] {
    register_loss("BadShape", [](const at::Tensor& yt, const at::Tensor& yp, const nlohmann::json&) {
      return (yt - yp).abs().sum().reshape({1});
    });
    return true;
  }();
  (void)bad;
  EXPECT_NE(config_error([] {
              compute_loss("BadShape", at::ones({2, 2}), at::zeros({2, 2}), false);
            }).find("its function returned (1) for a batch of 2"),
            std::string::npos);
  // A loss cut from autograd, a metric under fit's own names, and a metric whose values change in number.
  static const bool more = [] {
    register_loss("Detached", [](const at::Tensor& yt, const at::Tensor& yp, const nlohmann::json&) {
      return (yt - yp.detach()).abs().sum(-1);
    });
    struct Growing : Metric {
      size_t state_size() const override { return 1; }
      void update_state(const at::Tensor&, const at::Tensor&, const at::Tensor&, double* s) const override {
        s[0] += 1;
      }
      std::vector<double> result(const double* s) const override {
        return s[0] > 0 ? std::vector<double>{s[0], s[0]} : std::vector<double>{0};
      }
    };
    register_metric("Growing", [](const nlohmann::json&) { return std::make_unique<Growing>(); });
    return true;
  }();
  (void)more;
  EXPECT_NE(config_error([] {
              compute_loss("Detached", at::ones({2, 2}).requires_grad_(), at::zeros({2, 2}), false);
            }).find("does not depend on y_pred through autograd"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              MetricSet({R"({"class_name": "MaxAbsError", "config": {"name": "loss"}})"}, "mse", false, 2);
            }).find("the name is fit's own"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              MetricSet({R"({"class_name": "MeanAbsoluteError", "config": {"name": "val_loss"}})"}, "mse", false, 2);
            }).find("the name is fit's own"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              MetricSet set({"Growing"}, "mse", false, 2);
              std::vector<double> state;
              set.update(at::ones({2, 2}), at::zeros({2, 2}), state);
              set.results(state);
            }).find("its result has 2 value(s), 1 before any update"),
            std::string::npos);
}

}  // namespace torchfit::custom_objects_test
