// Keras's optimizer options (clipnorm, clipvalue, global_clipnorm, weight_decay, use_ema,
// gradient_accumulation_steps) and learning-rate schedules, against PyTorch (AdamW, clip_grad_*) and NumPy
// formulas at test time; accumulation against one large batch; EMA and accumulation state across a resume.
#include <gtest/gtest.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/error.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/optimizer_features.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/trainer.h>

#include "support/python_reference.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;
using torchfit::testing::run_python;
using torchfit::testing::to_json;

namespace {

// Drives make_optimizer + OptimizerFeatures on one (2, 3) weight with the given gradients; returns the
// weight after each step and the EMA at the end.
struct Run {
  std::vector<at::Tensor> weights;
  at::Tensor ema;
};
Run drive(const OptimizerOptions& o, const at::Tensor& w0, const std::vector<at::Tensor>& grads) {
  at::Tensor w = w0.clone().set_requires_grad(true);
  auto opt = make_optimizer(o, {w});
  OptimizerFeatures f(o, *opt, {w}, resolved_learning_rate(o));
  Run r;
  for (const auto& g : grads) {
    w.mutable_grad() = g.clone();
    if (f.before_update()) {
      opt->step();
      f.after_update();
    }
    r.weights.push_back(w.detach().clone());
  }
  if (!f.averages().empty()) r.ema = f.averages()[0].clone();
  return r;
}

std::vector<at::Tensor> gradients(int n) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(8);
  std::vector<at::Tensor> g;
  for (int i = 0; i < n; ++i) g.push_back(at::randn({2, 3}, gen) * 3.0);
  return g;
}

nlohmann::json json_list(const std::vector<at::Tensor>& ts) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& t : ts) j.push_back(to_json(t));
  return j;
}

at::Tensor from_json(const nlohmann::json& j) {
  std::vector<double> flat;
  for (const auto& row : j)
    for (const auto& v : row) flat.push_back(v.get<double>());
  return at::tensor(flat, at::kDouble).reshape({static_cast<int64_t>(j.size()), -1});
}

}  // namespace

TEST(OptimizerFeatures, AdamWithWeightDecayEqualsPyTorchAdamW) {
  const at::Tensor w0 = at::linspace(-1, 1, 6).reshape({2, 3});
  const auto g = gradients(5);
  const auto run = drive(OptimizerOptions().name("adam").learning_rate(0.05).weight_decay(0.1), w0, g);
  const auto r = run_python({"torch"},
                            "import torch\nw = torch.tensor(data['w0'], requires_grad=True)\n"
                            "opt = torch.optim.AdamW([w], lr=0.05, betas=(0.9, 0.999), eps=1e-7, weight_decay=0.1)\n"
                            "out = []\nfor g in data['g']:\n    w.grad = torch.tensor(g)\n    opt.step()\n"
                            "    out.append(w.detach().tolist())\n",
                            {{"w0", to_json(w0)}, {"g", json_list(g)}});
  TORCHFIT_REQUIRE_PYTHON(r);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_LT((run.weights[i].to(at::kDouble) - from_json(r.out[i])).abs().max().item<double>(), 1e-6) << i;
}

TEST(OptimizerFeatures, ClippingEqualsPyTorchAndNumPy) {
  const at::Tensor w0 = at::zeros({2, 3});
  const auto g = gradients(1);
  auto sgd = [](double lr) { return OptimizerOptions().name("sgd").learning_rate(lr); };
  // SGD with lr 1: the weight after one step is minus the clipped gradient.
  const at::Tensor global = -drive(sgd(1).global_clipnorm(1.5), w0, g).weights[0];
  const at::Tensor value = -drive(sgd(1).clipvalue(0.7), w0, g).weights[0];
  const at::Tensor norm = -drive(sgd(1).clipnorm(2.0), w0, g).weights[0];
  const auto r = run_python({"torch", "numpy"},
                            "import torch, numpy as np\ng = torch.tensor(data['g'])\n"
                            "a = g.clone().requires_grad_(False); p = torch.zeros_like(a, requires_grad=True)\n"
                            "p.grad = a.clone(); torch.nn.utils.clip_grad_norm_([p], 1.5)\n"
                            "q = torch.zeros_like(a, requires_grad=True); q.grad = a.clone()\n"
                            "torch.nn.utils.clip_grad_value_([q], 0.7)\n"
                            "n = np.array(data['g']); n = n * 2.0 / max(np.linalg.norm(n), 2.0)\n"
                            "out = {'global': p.grad.tolist(), 'value': q.grad.tolist(), 'norm': n.tolist()}\n",
                            {{"g", to_json(g[0])}});
  TORCHFIT_REQUIRE_PYTHON(r);
  // PyTorch divides by (norm + 1e-6), Keras by max(norm, clip): equal within 1e-6 relative.
  EXPECT_LT((global.to(at::kDouble) - from_json(r.out["global"])).abs().max().item<double>(), 1e-5);
  EXPECT_LT((value.to(at::kDouble) - from_json(r.out["value"])).abs().max().item<double>(), 1e-7);
  EXPECT_LT((norm.to(at::kDouble) - from_json(r.out["norm"])).abs().max().item<double>(), 1e-6);
}

TEST(OptimizerFeatures, EmaFollowsKerasFormula) {
  const at::Tensor w0 = at::linspace(-1, 1, 6).reshape({2, 3});
  const auto g = gradients(6);
  const auto run = drive(OptimizerOptions().name("sgd").learning_rate(0.1).use_ema(true).ema_momentum(0.9), w0, g);
  const auto r = run_python({"numpy"},
                            "import numpy as np\navg = None\nfor w in data['w']:\n    w = np.array(w)\n"
                            "    avg = w if avg is None else 0.9 * avg + 0.1 * w\nout = avg.tolist()\n",
                            {{"w", json_list(run.weights)}});
  TORCHFIT_REQUIRE_PYTHON(r);
  EXPECT_LT((run.ema.to(at::kDouble) - from_json(r.out)).abs().max().item<double>(), 1e-6);
}

TEST(OptimizerFeatures, SchedulesFollowKerasFormulas) {
  using S = LearningRateScheduleOptions;
  const S cosine = S().name("cosine").decay_steps(100).alpha(0.1);
  const S warm = S().name("cosine").decay_steps(50).initial_learning_rate(0.0).warmup_target(0.2).warmup_steps(10);
  const S expo = S().name("exponential").decay_steps(10).decay_rate(0.5);
  const S stair = S().name("exponential").decay_steps(10).decay_rate(0.5).staircase(true);
  const S piece = S().name("piecewise").boundaries({10, 20}).values({1.0, 0.5, 0.1});
  nlohmann::json got = nlohmann::json::object();
  const std::vector<int64_t> steps = {0, 1, 5, 9, 10, 11, 15, 20, 21, 59, 60, 100, 150};
  for (const int64_t s : steps) {
    got["cosine"].push_back(schedule_learning_rate(cosine, 0.1, s));
    got["warm"].push_back(schedule_learning_rate(warm, 0.1, s));
    got["expo"].push_back(schedule_learning_rate(expo, 0.1, s));
    got["stair"].push_back(schedule_learning_rate(stair, 0.1, s));
    got["piece"].push_back(schedule_learning_rate(piece, 0.1, s));
  }
  // The formulas of Keras's documentation (keras.optimizers.schedules), in NumPy.
  const auto r = run_python(
      {"numpy"},
      "import numpy as np\nsteps = np.array(data['steps'], dtype=float)\n"
      "def cos(step, decay, lr, alpha):\n    s = np.minimum(step, decay)\n"
      "    return lr * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * s / decay)) + alpha)\n"
      "s = np.minimum(steps, 60)\nwarm = np.where(s < 10, 0.0 + (0.2 - 0.0) * s / 10, cos(s - 10, 50, 0.2, 0.0))\n"
      "out = {'cosine': cos(steps, 100, 0.1, 0.1).tolist(), 'warm': warm.tolist(),\n"
      "       'expo': (0.1 * 0.5 ** (steps / 10)).tolist(), 'stair': (0.1 * 0.5 ** np.floor(steps / 10)).tolist(),\n"
      "       'piece': np.where(steps <= 10, 1.0, np.where(steps <= 20, 0.5, 0.1)).tolist()}\n",
      {{"steps", steps}});
  TORCHFIT_REQUIRE_PYTHON(r);
  for (const auto& name : {"cosine", "warm", "expo", "stair", "piece"})
    for (size_t i = 0; i < steps.size(); ++i)
      EXPECT_NEAR(got[name][i].get<double>(), r.out[name][i].get<double>(), 1e-12) << name << " step " << steps[i];
  EXPECT_THROW(check_schedule(S().name("piecewise").boundaries({10}).values({1.0})), ConfigError);
  EXPECT_THROW(check_schedule(S().name("cosine")), ConfigError);  // no decay_steps
  EXPECT_THROW(check_schedule(S().name("linear").decay_steps(3)), ConfigError);
}

TEST(OptimizerFeatures, BadOptionsAreConfigErrors) {
  at::Tensor w = at::zeros({2}).set_requires_grad(true);
  auto opt = make_optimizer(OptimizerOptions(), {w});
  auto make = [&](const OptimizerOptions& o) { OptimizerFeatures(o, *opt, {w}, 1e-3); };
  EXPECT_THROW(make(OptimizerOptions().clipnorm(1).clipvalue(1)), ConfigError);
  EXPECT_THROW(make(OptimizerOptions().gradient_accumulation_steps(1)), ConfigError);
  EXPECT_THROW(make(OptimizerOptions().use_ema(true).ema_momentum(1.5)), ConfigError);
  EXPECT_THROW(make(OptimizerOptions().weight_decay(-0.1)), ConfigError);
}

namespace {

at::Tensor data_x() { return at::randn({32, 4}, at::make_generator<at::CPUGeneratorImpl>(12)); }
at::Tensor data_y() { return at::one_hot(at::arange(32) % 3, 3).to(at::kFloat); }

std::vector<at::Tensor> trained_weights(const OptimizerOptions& o, int64_t batch, int64_t steps) {
  at::manual_seed(5);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions().optimizer(o));
  data::TensorIterator train(data_x(), data_y(), batch, false, 0);
  if (steps > 0) t.fit(train, FitOptions().epochs(1).steps_per_epoch(steps).verbose(0));
  std::vector<at::Tensor> w;
  for (const auto& p : t.model()->parameters()) w.push_back(p.detach().clone());
  return w;
}

}  // namespace

TEST(OptimizerFeatures, FourAccumulatedBatchesOfEightEqualOneBatchOf32) {
  for (const std::string name : {"adam", "sgd", "rmsprop"}) {
    const auto big = trained_weights(OptimizerOptions().name(name).learning_rate(0.05), 32, 1);
    const auto acc =
        trained_weights(OptimizerOptions().name(name).learning_rate(0.05).gradient_accumulation_steps(4), 8, 4);
    const auto start = trained_weights(OptimizerOptions().name(name).learning_rate(0.05), 32, 0);
    for (size_t i = 0; i < big.size(); ++i) {
      EXPECT_LT((big[i] - acc[i]).abs().max().item<double>(), 1e-5) << name << " parameter " << i;
      EXPECT_GT((big[i] - start[i]).abs().max().item<double>(), 1e-3) << name << ": the step changed nothing";
    }
  }
}

// ModelCheckpoint after an EMA run: the last checkpoint's model holds the averages fit() ended with (what
// load_model gives), and only after such a run.
TEST(OptimizerFeatures, TheLastCheckpointOfAnEmaRunHoldsTheAverages) {
  torchfit::testing::TempDir dir("features_ema_checkpoint");
  for (const bool ema : {true, false}) {
    at::manual_seed(5);
    Trainer t(torchfit::testing::tiny_mlp(),
              CompileOptions().optimizer(OptimizerOptions().learning_rate(0.01).use_ema(ema).ema_momentum(0.8)));
    data::TensorIterator train(data_x(), data_y(), 8, true, 3);
    auto save = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(dir.file("m.ckpt")));
    t.fit(train, FitOptions().epochs(2).verbose(0).callbacks({save}));
    EXPECT_EQ(save->holds_averaged_weights(), ema);
    const auto saved = saving::load_model(dir.file("m.ckpt"))->parameters(), now = t.model()->parameters();
    ASSERT_EQ(saved.size(), now.size());
    for (size_t i = 0; i < now.size(); ++i) {
      EXPECT_TRUE(at::equal(saved[i], now[i])) << "parameter " << i << (ema ? " (EMA)" : "");
      if (ema) EXPECT_TRUE(at::equal(saved[i], t.optimizer_features().averages()[i])) << "parameter " << i;
    }
  }
}

TEST(OptimizerFeatures, EmaAccumulationAndScheduleSurviveAResumeBitForBit) {
  torchfit::testing::TempDir dir("features_resume");
  const auto o = OptimizerOptions()
                     .name("adam")
                     .learning_rate(0.01)
                     .use_ema(true)
                     .ema_momentum(0.8)
                     .gradient_accumulation_steps(3)
                     .weight_decay(0.01)
                     .clipnorm(1.0)
                     .learning_rate_schedule(LearningRateScheduleOptions().name("cosine").decay_steps(5));
  auto fresh = [&] {
    at::manual_seed(5);
    return std::make_unique<Trainer>(torchfit::testing::tiny_mlp(), CompileOptions().optimizer(o));
  };
  auto fit = [&](Trainer& t, int epochs, const std::string& resume, const std::string& ckpt) {
    data::TensorIterator train(data_x(), data_y(), 8, true, 3);
    auto save = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(ckpt));
    t.fit(train, FitOptions().epochs(epochs).verbose(0).resume_from(resume).callbacks({save}));
  };
  auto whole = fresh();
  fit(*whole, 2, "", dir.file("whole.ckpt"));
  auto first = fresh();
  fit(*first, 1, "", dir.file("e1.ckpt"));  // 4 batches: one update, one batch accumulated
  EXPECT_EQ(first->optimizer_features().accumulated(), 1);
  auto resumed = fresh();
  fit(*resumed, 2, dir.file("e1.ckpt"), dir.file("e2.ckpt"));
  EXPECT_EQ(resumed->optimizer_features().iterations(), whole->optimizer_features().iterations());
  EXPECT_EQ(resumed->optimizer_features().iterations(), 2);
  const auto a = whole->model()->parameters(), b = resumed->model()->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "parameter " << i;
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(at::equal(whole->optimizer_features().averages()[i], resumed->optimizer_features().averages()[i]));
  // fit() ended by copying the averages into the weights (Keras's finalize_variable_values).
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], whole->optimizer_features().averages()[i]));
  // A schedule's rate is not settable (Keras).
  EXPECT_THROW(whole->set_learning_rate(0.5), ConfigError);
}
