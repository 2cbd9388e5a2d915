// A custom train_step / test_step (Keras 3's "customizing what happens in fit()"): a two-loss model —
// cross-entropy plus a consistency term between the predictions of x and of x reversed along its features
// — against PyTorch-Python on the same batches with SGD; the progress line, History and EarlyStopping on
// the step's own names; exact resume; a step that returns no "loss".
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <sstream>

#include <torchfit/data/arrays.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/early_stopping.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit::custom_step_test {
using data::Arrays;

namespace {

// loss = the compiled loss (sparse cross-entropy) + weight · mean over the batch of Σ_k (p_k(x) − p_k(x̃))²,
// x̃ = x with its features in reverse order, p the softmax probabilities.
class ConsistencyTrainer : public Trainer {
 public:
  ConsistencyTrainer(Model model, CompileOptions options, double weight)
      : Trainer(std::move(model), std::move(options)), weight_(weight) {}
  Logs train_step(const data::Batch& batch) override {
    const auto [ce, consistency] = losses(batch);
    const at::Tensor loss = ce + weight_ * consistency;
    minimize(loss);
    return {{"loss", loss.item<double>()}, {"ce", ce.item<double>()}, {"consistency", consistency.item<double>()}};
  }
  Logs test_step(const data::Batch& batch) override {
    const auto [ce, consistency] = losses(batch);
    return {{"loss", (ce + weight_ * consistency).item<double>()},
            {"ce", ce.item<double>()},
            {"consistency", consistency.item<double>()}};
  }
  std::vector<std::string> step_names() const override { return {"ce", "consistency"}; }

 private:
  std::pair<at::Tensor, at::Tensor> losses(const data::Batch& batch) {
    const auto out = call_model(batch);
    data::Batch reversed = batch;
    reversed.x = batch.x.flip({1});
    const auto other = call_model(reversed);
    auto probs = [&](const at::Tensor& z) { return compiled_outputs().logits() ? at::softmax(z, 1) : z; };
    return {compiled_loss(batch, out), (probs(out[0]) - probs(other[0])).pow(2).sum(1).mean()};
  }
  double weight_;
};

struct Recorder : Callback {
  std::vector<double> losses;
  std::vector<Logs> epochs;
  void on_train_batch_end(int64_t, const Logs& logs) override { losses.push_back(logs.at("batch_loss")); }
  void on_epoch_end(int, const Logs& logs) override { epochs.push_back(logs); }
};

Sequential two_dense() {
  Sequential m;
  m->add(Dense(DenseOptions(6).activation("relu").input_shape(Shape{4})));
  m->add(Dense(DenseOptions(3).activation("softmax")));
  return m;
}

CompileOptions sce(double lr) {
  return CompileOptions()
      .loss("sparse_categorical_crossentropy")
      .optimizer(OptimizerOptions().name("sgd").learning_rate(lr));
}

const char* kTorchConsistency = R"(
import torch
P = [torch.tensor(p, dtype=torch.float32, requires_grad=True) for p in data["params"]]
def forward(x):
    return torch.relu(x @ P[0].T + P[1]) @ P[2].T + P[3]
def losses(x, y):
    z, z2 = forward(x), forward(x.flip(1))
    ce = torch.nn.functional.cross_entropy(z, y)
    cons = ((torch.softmax(z, 1) - torch.softmax(z2, 1)) ** 2).sum(1).mean()
    return ce + data["weight"] * cons, ce, cons
def means(x, y, batches, train):
    s, n = [0.0, 0.0, 0.0], 0
    for idx in batches:
        if train:
            opt.zero_grad()
        vals = losses(x[idx], y[idx])
        if train:
            vals[0].backward()
            opt.step()
            steps.append(vals[0].item())
        s = [a + v.item() * len(idx) for a, v in zip(s, vals)]
        n += len(idx)
    return dict(zip(("loss", "ce", "consistency"), (a / n for a in s)))
x, vx = torch.tensor(data["x"]), torch.tensor(data["vx"])
y, vy = torch.tensor(data["y"], dtype=torch.long), torch.tensor(data["vy"], dtype=torch.long)
opt = torch.optim.SGD(P, lr=data["lr"])
steps, epochs = [], []
for e in range(data["epochs"]):
    logs = means(x, y, data["batches"], True)
    with torch.no_grad():
        logs.update({"val_" + k: v for k, v in means(vx, vy, [list(range(len(vy)))], False).items()})
    epochs.append(logs)
out = {"steps": steps, "epochs": epochs}
)";

}  // namespace

TEST(CustomStep, ATwoLossTrainStepTrainsAsPyTorchAndFitReportsItsNames) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(21);
  const at::Tensor x = at::randn({12, 4}, gen), vx = at::randn({6, 4}, gen);
  const at::Tensor y = at::randint(0, 3, {12}, gen, at::kLong), vy = at::randint(0, 3, {6}, gen, at::kLong);
  at::manual_seed(4);
  ConsistencyTrainer t(two_dense(), sce(0.2), 0.7);
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : t.model()->parameters()) params.push_back(torchfit::testing::to_json(p.detach()));
  const nlohmann::json input = {{"params", params},
                                {"x", torchfit::testing::to_json(x)},
                                {"y", torchfit::testing::to_json(y)},
                                {"vx", torchfit::testing::to_json(vx)},
                                {"vy", torchfit::testing::to_json(vy)},
                                {"weight", 0.7},
                                {"lr", 0.2},
                                {"epochs", 3},
                                {"batches", {{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11}}}};
  auto rec = std::make_shared<Recorder>();
  std::ostringstream progress;
  t.fit(Arrays(x, y), FitOptions().epochs(3).verbose(2).out(&progress).callbacks({rec}),
        ArrayOptions().batch_size(5).shuffle(false).validation_data(Arrays(vx, vy)));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchConsistency, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto want = ref.out["steps"].get<std::vector<double>>();
  ASSERT_EQ(rec->losses.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(rec->losses[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  for (size_t e = 0; e < 3; ++e) {
    for (const auto& [key, value] : ref.out["epochs"][e].items()) {
      ASSERT_TRUE(rec->epochs[e].count(key)) << "no log '" << key << "'";
      EXPECT_NEAR(rec->epochs[e].at(key), value.get<double>(), 1e-5 * (1 + std::abs(value.get<double>())))
          << "epoch " << e << " " << key;
    }
  }
  EXPECT_EQ(t.metric_names(), (std::vector<std::string>{"ce", "consistency"}));
  EXPECT_NE(progress.str().find("3/3 - "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(" - loss: "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(" - ce: "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(" - consistency: "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(" - val_consistency: "), std::string::npos) << progress.str();
  // evaluate runs the custom test_step.
  const Logs ev = t.evaluate(Arrays(vx, vy), 6);
  EXPECT_NEAR(ev.at("loss"), ev.at("ce") + 0.7 * ev.at("consistency"), 1e-6);
}

TEST(CustomStep, EarlyStoppingMonitorsAStepValueAndResumeContinuesExactly) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor x = at::randn({20, 4}, gen), y = at::randint(0, 3, {20}, gen, at::kLong);
  const Arrays train(x, y), validation(x.slice(0, 0, 8), y.slice(0, 0, 8));
  {  // never improving by 1e9: stops after patience + 1 = 2 epochs, on the custom step's name
    at::manual_seed(1);
    ConsistencyTrainer t(two_dense(), sce(0.1), 0.5);
    auto stop = std::make_shared<EarlyStopping>(
        EarlyStoppingOptions().monitor("val_consistency").min_delta(1e9).patience(1).mode("min"));
    const History h = t.fit(train, FitOptions().epochs(6).verbose(0).callbacks({stop}),
                            ArrayOptions().batch_size(8).validation_data(validation));
    EXPECT_EQ(h.history.at("val_consistency").size(), 2u);
    EXPECT_EQ(h.history.at("ce").size(), 2u);
  }
  auto fit = [&](Trainer& t, int epochs, const std::string& resume) {
    auto rec = std::make_shared<Recorder>();
    FitOptions o = FitOptions().epochs(epochs).verbose(0).callbacks({rec});
    if (!resume.empty()) o.resume_from(resume);
    t.fit(train, o, ArrayOptions().batch_size(6).shuffle(true).seed(3));
    return rec->losses;
  };
  at::manual_seed(8);
  ConsistencyTrainer whole(two_dense(), sce(0.1), 0.5);
  const auto all = fit(whole, 3, "");
  testing::TempDir dir;
  const std::string ckpt = (dir.path / "custom.ckpt").string();
  at::manual_seed(8);
  ConsistencyTrainer first(two_dense(), sce(0.1), 0.5);
  const auto one = fit(first, 1, "");
  first.save_checkpoint(ckpt);
  at::manual_seed(99);
  ConsistencyTrainer resumed(two_dense(), sce(0.1), 0.5);
  const auto rest = fit(resumed, 3, ckpt);
  ASSERT_EQ(one.size() + rest.size(), all.size());
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i], all[one.size() + i]) << "resumed step " << i;
}

namespace {

// Two models, two optimizers (the shape of a GAN's step): the compiled model learns the labels as before,
// and a critic of its own — a Dense on the model's detached probabilities, with its own Adam — learns to
// tell whether the batch's labels are even. The critic, its optimizer's moments and a step counter are
// the step's own variables (save_own_variables / load_own_variables).
class TwoOptimizerTrainer : public Trainer {
 public:
  TwoOptimizerTrainer(Model model, CompileOptions options, bool keep_own)
      : Trainer(std::move(model), std::move(options)), keep_own_(keep_own) {
    critic_->add(Dense(DenseOptions(1).activation("sigmoid").input_shape(Shape{3})));
    critic_optimizer_ = make_optimizer(OptimizerOptions().name("adam").learning_rate(0.05), critic_->parameters());
  }
  Logs train_step(const data::Batch& batch) override {
    const auto out = call_model(batch);
    const at::Tensor loss = compiled_loss(batch, out);
    minimize(loss);
    const at::Tensor probs = (compiled_outputs().logits() ? at::softmax(out[0], 1) : out[0]).detach();
    const at::Tensor even = batch.y.remainder(2).eq(0).to(at::kFloat).unsqueeze(1);
    critic_optimizer_->zero_grad();
    const at::Tensor critic_loss = at::binary_cross_entropy(critic_->forward(probs).clamp(1e-7, 1 - 1e-7), even);
    critic_loss.backward();
    critic_optimizer_->step();
    steps_ += 1;
    return {{"loss", loss.item<double>()}, {"critic_loss", critic_loss.item<double>()}};
  }
  std::vector<std::string> step_names() const override { return {"critic_loss"}; }
  void save_own_variables(torch::serialize::OutputArchive& store) const override {
    if (!keep_own_) return;
    torch::serialize::OutputArchive critic, optimizer;
    critic_->save(critic);
    critic_optimizer_->save(optimizer);
    store.write("critic", critic);
    store.write("critic_optimizer", optimizer);
    store.write("steps", at::tensor(steps_));
  }
  void load_own_variables(torch::serialize::InputArchive& store) override {
    if (!keep_own_) return;
    torch::serialize::InputArchive critic, optimizer;
    store.read("critic", critic);
    store.read("critic_optimizer", optimizer);
    critic_->load(critic);
    critic_optimizer_->load(optimizer);
    at::Tensor steps;
    store.read("steps", steps);
    steps_ = steps.item<int64_t>();
  }
  int64_t steps() const { return steps_; }
  std::vector<at::Tensor> critic_weights() const {
    std::vector<at::Tensor> w;
    for (const auto& p : critic_->parameters()) w.push_back(p.detach().clone());
    return w;
  }

 private:
  Sequential critic_;
  std::unique_ptr<torch::optim::Optimizer> critic_optimizer_;
  int64_t steps_ = 0;
  bool keep_own_;
};

}  // namespace

// Resume of a two-optimizer step: 1 epoch + checkpoint + resume for 2 more gives the uninterrupted 3
// epochs' step values (both losses), critic weights and step count exactly — and, as the control, a
// subclass that does not save its own variables resumes with a fresh critic and does not.
TEST(CustomStep, ASecondModelAndOptimizerResumeExactlyThroughTheirOwnVariables) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(9);
  const at::Tensor x = at::randn({18, 4}, gen), y = at::randint(0, 3, {18}, gen, at::kLong);
  struct Values : Callback {
    std::vector<double> loss, critic;
    void on_train_batch_end(int64_t, const Logs& logs) override {
      loss.push_back(logs.at("batch_loss"));
      critic.push_back(logs.at("batch_critic_loss"));
    }
  };
  auto fit = [&](TwoOptimizerTrainer& t, int epochs, const std::string& resume) {
    auto rec = std::make_shared<Values>();
    FitOptions o = FitOptions().epochs(epochs).verbose(0).callbacks({rec});
    if (!resume.empty()) o.resume_from(resume);
    t.fit(Arrays(x, y), o, ArrayOptions().batch_size(6).shuffle(true).seed(4));
    return rec;
  };
  at::manual_seed(12);
  TwoOptimizerTrainer whole(two_dense(), sce(0.1), true);
  const auto all = fit(whole, 3, "");
  testing::TempDir dir;
  for (const bool keep : {true, false}) {
    SCOPED_TRACE(keep ? "own variables saved" : "own variables not saved");
    const std::string ckpt = (dir.path / (keep ? "own.ckpt" : "none.ckpt")).string();
    at::manual_seed(12);
    TwoOptimizerTrainer first(two_dense(), sce(0.1), keep);
    const auto one = fit(first, 1, "");
    first.save_checkpoint(ckpt);
    at::manual_seed(77);  // another critic to start from: only the checkpoint can bring the first one back
    TwoOptimizerTrainer resumed(two_dense(), sce(0.1), keep);
    const auto rest = fit(resumed, 3, ckpt);
    ASSERT_EQ(one->critic.size() + rest->critic.size(), all->critic.size());
    bool same = resumed.steps() == whole.steps();
    for (size_t i = 0; i < rest->critic.size(); ++i)
      same = same && rest->critic[i] == all->critic[one->critic.size() + i];
    const auto a = resumed.critic_weights(), b = whole.critic_weights();
    for (size_t i = 0; i < a.size(); ++i) same = same && at::equal(a[i], b[i]);
    EXPECT_EQ(same, keep) << "the resumed critic " << (keep ? "differs" : "is the same without its variables");
    for (size_t i = 0; i < rest->loss.size(); ++i) EXPECT_EQ(rest->loss[i], all->loss[one->loss.size() + i]) << i;
  }
  EXPECT_EQ(whole.steps(), 9);
  // A checkpoint of a plain Trainer (no variables of its own) starts a two-optimizer run: nothing to load.
  const std::string plain = (dir.path / "plain.ckpt").string();
  Trainer(two_dense(), sce(0.1)).save_checkpoint(plain);
  TwoOptimizerTrainer from_plain(two_dense(), sce(0.1), true);
  EXPECT_NO_THROW(from_plain.load_checkpoint(plain));
}

TEST(CustomStep, AStepWithoutALossIsAnErrorAndTheCompiledStepIsTheDefault) {
  struct NoLoss : Trainer {
    using Trainer::Trainer;
    Logs train_step(const data::Batch&) override { return {{"ce", 1.0}}; }
  };
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
  const at::Tensor x = at::randn({6, 4}, gen), y = at::randint(0, 3, {6}, gen, at::kLong);
  NoLoss bad(two_dense(), sce(0.1));
  const std::string e = testing::error_message<ConfigError>(
      [&] { bad.fit(Arrays(x, y), FitOptions().verbose(0), ArrayOptions().batch_size(3)); }, "ConfigError");
  EXPECT_NE(e.find("train_step must return \"loss\""), std::string::npos) << e;
  EXPECT_NE(e.find("it returned: ce"), std::string::npos) << e;
  // A Trainer that overrides nothing takes the compiled step: the same losses as the public train_step.
  at::manual_seed(3);
  Trainer plain(two_dense(), sce(0.1));
  at::manual_seed(3);
  Trainer direct(two_dense(), sce(0.1));
  auto rec = std::make_shared<Recorder>();
  plain.fit(Arrays(x, y), FitOptions().verbose(0).callbacks({rec}), ArrayOptions().batch_size(3).shuffle(false));
  ASSERT_EQ(rec->losses.size(), 2u);
  EXPECT_EQ(rec->losses[0], direct.train_step(x.slice(0, 0, 3), y.slice(0, 0, 3)));
  EXPECT_EQ(rec->losses[1], direct.train_step(x.slice(0, 3, 6), y.slice(0, 3, 6)));
}

}  // namespace torchfit::custom_step_test
