// Keras 3's optimizers (training/keras_optimizers.h, make_optimizer): 20 steps of each against the float64
// NumPy reference written from Keras's update_step (tests/training/reference/keras_optimizers_reference.py);
// a state saved and loaded mid-way continues as the uninterrupted run; bad options name themselves.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <ATen/ATen.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/serialize.h>

#include <torchfit/error.h>
#include <torchfit/training/keras_optimizers.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/optimizer_features.h>
#include <torchfit/training/optimizers.h>

#include "support/keras_reference.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

constexpr int kOptSteps = 20;

at::Tensor opt_initial_weights() { return (at::arange(12, at::kFloat).reshape({3, 4}) * 0.37).sin() * 1.5; }

// Gradients that change sign and size from step to step, with one small column (where epsilon matters).
std::vector<at::Tensor> opt_gradients() {
  std::vector<at::Tensor> g;
  const at::Tensor j = at::arange(12, at::kFloat).reshape({3, 4});
  const at::Tensor scale = at::tensor({1.0f, 0.3f, 2.0f, 1e-3f}).reshape({1, 4});
  for (int t = 0; t < kOptSteps; ++t) g.push_back((j * 1.3 + 0.7 * (t + 1)).sin() * scale * (0.5 + 0.1 * t));
  return g;
}

// make_optimizer + OptimizerFeatures (weight decay) over one weight for `grads`; the weight after each.
struct OptDriver {
  explicit OptDriver(const OptimizerOptions& o, const at::Tensor& w0)
      : w(w0.clone().set_requires_grad(true)),
        opt(make_optimizer(o, {w})),
        features(o, *opt, {w}, resolved_learning_rate(o)) {}
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& grads, size_t from, size_t to) {
    std::vector<at::Tensor> out;
    for (size_t i = from; i < to; ++i) {
      w.mutable_grad() = grads[i].clone();
      if (features.before_update()) {
        opt->step();
        features.after_update();
      }
      out.push_back(w.detach().clone());
    }
    return out;
  }
  at::Tensor w;
  std::unique_ptr<torch::optim::Optimizer> opt;
  OptimizerFeatures features;
};

// The reference's weights after each step for optimizer_config(o) (Keras's names: what the script reads).
// `rates`: the learning rate of each step (empty: the optimizer's constant rate).
std::vector<at::Tensor> opt_reference(const OptimizerOptions& o, const at::Tensor& w0, const std::vector<at::Tensor>& g,
                                      const std::vector<double>& rates = {}) {
  nlohmann::json request = {{"config", optimizer_config(o, resolved_learning_rate(o))}, {"w0", tensor_json(w0)}};
  for (size_t i = 0; i < g.size(); ++i) {
    request["grads"].push_back(tensor_json(g[i]));
    request["learning_rates"].push_back(rates.empty() ? resolved_learning_rate(o) : rates[i]);
  }
  torchfit::testing::TempDir dir("keras_opt_ref");
  const std::string in = dir.file("request.json"), out = dir.file("result.json");
  std::ofstream(in) << request.dump();
  const std::string script =
      std::string(TORCHFIT_SOURCE_DIR) + "/tests/training/reference/keras_optimizers_reference.py";
  const std::string cmd = "/usr/bin/python3 '" + script + "' '" + in + "' '" + out + "'";
  std::vector<at::Tensor> w;
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "reference failed: " << cmd;
    return w;
  }
  nlohmann::json result;
  std::ifstream(out) >> result;
  for (const auto& t : result["w"]) w.push_back(torchfit::testing::detail::reference_tensor(t));
  return w;
}

struct OptCase {
  const char* label;
  OptimizerOptions options;
};

std::vector<OptCase> opt_cases() {
  return {
      {"adam", OptimizerOptions().name("adam").learning_rate(0.05)},
      {"adam_reference_kernels", OptimizerOptions().name("adam").learning_rate(0.05).fused(false)},
      {"adam_amsgrad", OptimizerOptions().name("adam").learning_rate(0.05).amsgrad(true)},
      {"adamw", OptimizerOptions().name("adamw").learning_rate(0.05)},
      {"adamw_amsgrad_wd", OptimizerOptions().name("adamw").learning_rate(0.05).amsgrad(true).weight_decay(0.1)},
      {"sgd", OptimizerOptions().name("sgd").learning_rate(0.1)},
      {"sgd_nesterov", OptimizerOptions().name("sgd").learning_rate(0.05).momentum(0.9).nesterov(true)},
      {"rmsprop", OptimizerOptions().name("rmsprop").learning_rate(0.01)},
      {"rmsprop_centered_momentum",
       OptimizerOptions().name("rmsprop").learning_rate(0.01).centered(true).momentum(0.5).rho(0.8)},
      {"adagrad", OptimizerOptions().name("adagrad").learning_rate(0.1)},
      {"adadelta", OptimizerOptions().name("adadelta").learning_rate(1.0).epsilon(1e-4)},
      {"adamax", OptimizerOptions().name("adamax").learning_rate(0.05)},
      {"nadam", OptimizerOptions().name("nadam").learning_rate(0.05)},
      {"lion", OptimizerOptions().name("lion").learning_rate(0.01)},
      {"ftrl", OptimizerOptions().name("ftrl").learning_rate(0.1)},
      {"ftrl_regularized", OptimizerOptions()
                               .name("ftrl")
                               .learning_rate(0.1)
                               .learning_rate_power(-0.7)
                               .initial_accumulator_value(0.2)
                               .l1_regularization_strength(0.01)
                               .l2_regularization_strength(0.02)
                               .l2_shrinkage_regularization_strength(0.01)
                               .beta(0.1)},
      {"adafactor", OptimizerOptions().name("adafactor").learning_rate(0.5)},
      {"adafactor_options",
       OptimizerOptions().name("adafactor").learning_rate(0.05).beta_2_decay(-0.5).epsilon_2(0.1).clip_threshold(0.5)},
  };
}

}  // namespace

// Every optimizer's 20 steps agree with Keras's update rule in float64 to float32 rounding: the
// difference stays below 2e-6 + 1e-5 of how far the weight moved.
TEST(KerasOptimizers, TwentyStepsMatchTheKerasReference) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const at::Tensor w0 = opt_initial_weights();
  const auto g = opt_gradients();
  for (const auto& c : opt_cases()) {
    SCOPED_TRACE(c.label);
    OptDriver d(c.options, w0);
    const auto ours = d.run(g, 0, kOptSteps);
    const auto ref = opt_reference(c.options, w0, g);
    ASSERT_EQ(ref.size(), ours.size());
    double worst = 0;
    for (int t = 0; t < kOptSteps; ++t) {
      const at::Tensor moved = (ref[t] - w0.to(at::kDouble)).abs();
      const at::Tensor err = (ours[t].to(at::kDouble) - ref[t]).abs();
      const at::Tensor allowed = moved * 1e-5 + 2e-6;
      worst = std::max(worst, (err / allowed).max().item<double>());
    }
    EXPECT_LE(worst, 1.0) << "worst error / allowed over the 20 steps";
    const double moved = (ref.back() - w0.to(at::kDouble)).abs().max().item<double>();
    EXPECT_GT(moved, 1e-2) << "the problem should move the weights";
  }
}

// SGD with momentum under a schedule: Keras's velocity m = momentum·m − lr_t·g keeps each step's own rate
// (torch::optim::SGD's b = momentum·b + g, w −= lr_t·b would rescale the whole history by today's rate).
// ExponentialDecay halves the rate every 5 steps; the rates of the reference are written from Keras's
// formula lr0 · 0.5^(t/5), t the updates so far.
TEST(KerasOptimizers, SgdMomentumUnderAScheduleKeepsEachStepsRate) {
  const std::string why = torchfit::testing::keras_reference_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  const at::Tensor w0 = opt_initial_weights();
  const auto g = opt_gradients();
  for (const bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "momentum");
    const auto o =
        OptimizerOptions().name("sgd").learning_rate(0.1).momentum(0.9).nesterov(nesterov).learning_rate_schedule(
            LearningRateScheduleOptions().name("exponential").decay_steps(5).decay_rate(0.5));
    std::vector<double> rates;
    for (int t = 0; t < kOptSteps; ++t) rates.push_back(0.1 * std::pow(0.5, t / 5.0));
    OptDriver d(o, w0);
    const auto ours = d.run(g, 0, kOptSteps);
    const auto ref = opt_reference(o, w0, g, rates);
    ASSERT_EQ(ref.size(), ours.size());
    for (int t = 0; t < kOptSteps; ++t) {
      const at::Tensor allowed = (ref[t] - w0.to(at::kDouble)).abs() * 1e-5 + 2e-6;
      EXPECT_LE(((ours[t].to(at::kDouble) - ref[t]).abs() / allowed).max().item<double>(), 1.0) << "step " << t;
    }
  }
}

// Ten steps, the optimizer's state saved and loaded into a fresh optimizer over a copy of the weights,
// ten more: bit for bit the uninterrupted twenty.
TEST(KerasOptimizers, StateSavedAndLoadedContinuesAsUninterrupted) {
  const at::Tensor w0 = opt_initial_weights();
  const auto g = opt_gradients();
  for (const auto& c : opt_cases()) {
    SCOPED_TRACE(c.label);
    OptDriver whole(c.options, w0);
    const auto straight = whole.run(g, 0, kOptSteps);
    OptDriver first(c.options, w0);
    first.run(g, 0, kOptSteps / 2);
    std::ostringstream saved;
    {
      torch::serialize::OutputArchive archive;
      first.opt->save(archive);
      archive.save_to(saved);
    }
    OptDriver second(c.options, first.w.detach());
    std::istringstream in(saved.str());
    torch::serialize::InputArchive archive;
    archive.load_from(in);
    second.opt->load(archive);
    const auto resumed = second.run(g, kOptSteps / 2, kOptSteps);
    EXPECT_TRUE(at::equal(resumed.back(), straight.back()))
        << "max diff " << (resumed.back() - straight.back()).abs().max().item<double>();
  }
}

// A checkpoint of torch::optim::RMSprop (what "rmsprop" was) loads into Keras's RMSprop: same slot names.
TEST(KerasOptimizers, RmspropLoadsATorchRmspropState) {
  at::Tensor w = opt_initial_weights().set_requires_grad(true);
  torch::optim::RMSprop torch_rms({w}, torch::optim::RMSpropOptions(0.01).alpha(0.9));
  w.mutable_grad() = opt_gradients()[0];
  torch_rms.step();
  torch::serialize::OutputArchive out;
  torch_rms.save(out);
  std::ostringstream saved;
  out.save_to(saved);
  at::Tensor w2 = w.detach().clone().set_requires_grad(true);
  auto keras = make_optimizer(OptimizerOptions().name("rmsprop").learning_rate(0.01), {w2});
  std::istringstream in(saved.str());
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  keras->load(archive);
  ASSERT_EQ(keras->state().size(), 1u);
  auto& s = static_cast<KerasSlotState&>(*keras->state().begin()->second);
  EXPECT_EQ(s.step(), 1);
  const at::Tensor square_avg = opt_gradients()[0].square() * 0.1;
  EXPECT_TRUE(at::allclose(s.slot("square_avg"), square_avg));
  // The next step goes on from that state with Keras's rule: v = 0.9 v + 0.1 g², w −= lr·g/√(v + ε).
  const at::Tensor g = opt_gradients()[1];
  w2.mutable_grad() = g.clone();
  keras->step();
  const at::Tensor v = square_avg * 0.9 + g.square() * 0.1;
  const at::Tensor expected = w.detach() - g * 0.01 / (v + 1e-7).sqrt();
  EXPECT_TRUE(at::allclose(w2.detach(), expected, 1e-5, 1e-7));
}

// A checkpoint of torch::optim::SGD (what "sgd" was before it followed Keras): its momentum buffer b is
// Keras's velocity m = −lr·b, and the next steps follow Keras's rule from there, as torch's would at this
// constant rate.
TEST(KerasOptimizers, SgdLoadsATorchSgdState) {
  at::Tensor w = opt_initial_weights().set_requires_grad(true);
  torch::optim::SGD torch_sgd({w}, torch::optim::SGDOptions(0.05).momentum(0.9));
  w.mutable_grad() = opt_gradients()[0];
  torch_sgd.step();
  torch::serialize::OutputArchive out;
  torch_sgd.save(out);
  std::ostringstream saved;
  out.save_to(saved);
  at::Tensor w2 = w.detach().clone().set_requires_grad(true);
  auto keras = make_optimizer(OptimizerOptions().name("sgd").learning_rate(0.05).momentum(0.9), {w2});
  std::istringstream in(saved.str());
  torch::serialize::InputArchive archive;
  archive.load_from(in);
  keras->load(archive);
  ASSERT_EQ(keras->state().size(), 1u);
  for (int k = 1; k <= 2; ++k) {
    w.mutable_grad() = opt_gradients()[k].clone();
    w2.mutable_grad() = opt_gradients()[k].clone();
    torch_sgd.step();
    keras->step();
  }
  EXPECT_TRUE(at::allclose(w2.detach(), w.detach(), 1e-5, 1e-7));
  EXPECT_FALSE(at::allclose(w.detach(), opt_initial_weights(), 1e-3, 1e-3)) << "the weights should move";
  auto& s = static_cast<KerasSlotState&>(*keras->state().begin()->second);
  EXPECT_EQ(s.slots.count("momentum_buffer"), 0u);
  EXPECT_EQ(s.slots.count("momentum"), 1u);
}

// Keras's defaults per optimizer where they differ from the shared fields' (OptimizerOptions::resolved).
TEST(KerasOptimizers, DefaultsAreKeras3s) {
  const auto r = [](const char* n) { return OptimizerOptions().name(n).resolved(); };
  EXPECT_DOUBLE_EQ(r("sgd").learning_rate(), 1e-2);
  for (const char* n :
       {"adam", "adamw", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "lion", "ftrl", "adafactor"})
    EXPECT_DOUBLE_EQ(r(n).learning_rate(), 1e-3) << n;
  EXPECT_DOUBLE_EQ(r("lion").beta_2(), 0.99);
  EXPECT_DOUBLE_EQ(r("adam").beta_2(), 0.999);
  EXPECT_DOUBLE_EQ(r("adadelta").rho(), 0.95);
  EXPECT_DOUBLE_EQ(r("rmsprop").rho(), 0.9);
  EXPECT_DOUBLE_EQ(r("adamw").weight_decay(), 0.004);
  EXPECT_DOUBLE_EQ(r("adam").weight_decay(), 0.0);
  EXPECT_DOUBLE_EQ(r("adagrad").initial_accumulator_value(), 0.1);
  EXPECT_DOUBLE_EQ(r("ftrl").learning_rate_power(), -0.5);
  EXPECT_DOUBLE_EQ(r("adagrad").epsilon(), 1e-7);
  EXPECT_DOUBLE_EQ(r("adafactor").beta_2_decay(), -0.8);
  EXPECT_DOUBLE_EQ(r("adafactor").epsilon_1(), 1e-30);
  EXPECT_DOUBLE_EQ(r("adafactor").epsilon_2(), 1e-3);
  EXPECT_DOUBLE_EQ(r("adafactor").clip_threshold(), 1.0);
  EXPECT_TRUE(r("adafactor").relative_step());
}

namespace {

template <typename F>
void expect_opt_error(F&& what, const std::string& part) {
  try {
    what();
    FAIL() << "no error; expected one containing: " << part;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(KerasOptimizers, BadOptionsNameTheKey) {
  at::Tensor w = at::zeros({2});
  const auto make = [&](const OptimizerOptions& o) { return [o, &w] { make_optimizer(o, {w}); }; };
  expect_opt_error(make(OptimizerOptions().name("rmsprop").rho(-0.5)), "rho");
  expect_opt_error(make(OptimizerOptions().name("adadelta").rho(1.5)), "rho");
  expect_opt_error(make(OptimizerOptions().name("lion").beta_1(0.0)), "beta_1");
  expect_opt_error(make(OptimizerOptions().name("nadam").beta_2(1.0)), "beta_2");
  expect_opt_error(make(OptimizerOptions().name("adagrad").initial_accumulator_value(-1)), "initial_accumulator_value");
  expect_opt_error(make(OptimizerOptions().name("ftrl").learning_rate_power(0.5)), "learning_rate_power");
  expect_opt_error(make(OptimizerOptions().name("ftrl").l1_regularization_strength(-1)), "l1_regularization_strength");
  expect_opt_error(make(OptimizerOptions().name("adamax").epsilon(-1e-7)), "epsilon");
  expect_opt_error(make(OptimizerOptions().name("adafactor").clip_threshold(0)), "clip_threshold");
  expect_opt_error(make(OptimizerOptions().name("adamx")), "unknown optimizer 'adamx'");
  expect_opt_error([] { OptimizerOptions::from_config({{"name", "adagrad"}, {"beta_1", 0.8}}); }, "'beta_1'");
  expect_opt_error([] { OptimizerOptions::from_config({{"name", "ftrl"}, {"l3", 0.8}}); }, "'l3'");
  expect_opt_error([] { OptimizerOptions::from_keras(nlohmann::json("Adamx")); }, "adamx");
  expect_opt_error([] { OptimizerOptions::from_config({{"name", "adam"}, {"decay", 0.01}}); }, "'decay' 0.01");
  expect_opt_error([] { OptimizerOptions::from_keras(nlohmann::json("{not json")); }, "not valid JSON");
}

// A checkpoint written before the arguments were per optimizer (Adam's config with momentum, nesterov and
// rho) reads back as the same Adam: no setting is reported as changed.
TEST(KerasOptimizers, AnOlderConfigIsNotAChange) {
  const auto old = nlohmann::json::parse(R"({"name": "adam", "learning_rate": 0.001, "beta_1": 0.9,
    "beta_2": 0.999, "epsilon": 1e-7, "momentum": 0.0, "nesterov": false, "rho": 0.9, "clipnorm": 1.0,
    "clipvalue": null, "global_clipnorm": null, "weight_decay": null, "use_ema": false, "ema_momentum": 0.99,
    "gradient_accumulation_steps": null})");
  EXPECT_EQ(optimizer_config_changes(old, optimizer_config(OptimizerOptions().clipnorm(1.0), 1e-3)), "");
  EXPECT_EQ(optimizer_config_changes(old, optimizer_config(OptimizerOptions().clipnorm(2.0), 1e-3)),
            "clipnorm 1.0 → 2.0");
}

// Keras's serialised optimizers, by name or object: the config Keras 3's get_config() writes for Ftrl and
// RMSprop (with its BaseOptimizer arguments) reads, and writes back as the same arguments.
TEST(KerasOptimizers, FromKerasReadsKerasSerializedOptimizers) {
  EXPECT_EQ(OptimizerOptions::from_keras(nlohmann::json("Nadam")).name(), "nadam");
  EXPECT_EQ(OptimizerOptions::from_keras(nlohmann::json("adamax")).name(), "adamax");
  const auto ftrl = OptimizerOptions::from_keras(nlohmann::json::parse(R"({"module": "keras.optimizers",
    "class_name": "Ftrl", "registered_name": null, "config": {"name": "ftrl", "learning_rate": 0.05,
    "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue": null, "use_ema": false,
    "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor": null,
    "gradient_accumulation_steps": null, "learning_rate_power": -0.6, "initial_accumulator_value": 0.2,
    "l1_regularization_strength": 0.01, "l2_regularization_strength": 0.02,
    "l2_shrinkage_regularization_strength": 0.03, "beta": 0.5}})"));
  EXPECT_EQ(ftrl.name(), "ftrl");
  EXPECT_EQ(ftrl.learning_rate(), 0.05);
  EXPECT_EQ(ftrl.learning_rate_power(), -0.6);
  EXPECT_EQ(ftrl.initial_accumulator_value(), 0.2);
  EXPECT_EQ(ftrl.l1_regularization_strength(), 0.01);
  EXPECT_EQ(ftrl.l2_regularization_strength(), 0.02);
  EXPECT_EQ(ftrl.l2_shrinkage_regularization_strength(), 0.03);
  EXPECT_EQ(ftrl.beta(), 0.5);
  const auto c = optimizer_config(ftrl, 0.05);
  EXPECT_EQ(c["beta"], 0.5);
  EXPECT_FALSE(c.contains("beta_1"));
  EXPECT_EQ(OptimizerOptions::from_config(c).l2_shrinkage_regularization_strength(), 0.03);
  const auto rms = OptimizerOptions::from_keras(nlohmann::json(
      R"({"class_name": "RMSprop", "config": {"name": "my_rms", "rho": 0.8, "momentum": 0.1, "epsilon": 1e-6,
          "centered": true}})"));
  EXPECT_EQ(rms.name(), "rmsprop");
  EXPECT_EQ(rms.rho(), 0.8);
  EXPECT_TRUE(rms.centered());
  expect_opt_error(
      [] {
        OptimizerOptions::from_keras(
            nlohmann::json::parse(R"({"class_name": "Adam", "config": {"loss_scale_factor": 128.0}})"));
      },
      "loss_scale_factor");
}

// CosineDecayRestarts, InverseTimeDecay and PolynomialDecay at steps 0..70 against Keras 3's __call__
// (keras/src/optimizers/schedules/learning_rate_schedule.py) transcribed into Python below; and each one's
// Keras config read back into the same schedule.
TEST(LearningRateSchedule, RestartsInverseTimeAndPolynomialFollowKeras) {
  const std::vector<LearningRateScheduleOptions> schedules = {
      LearningRateScheduleOptions().name("cosine_restarts").first_decay_steps(10).t_mul(2.0).m_mul(0.5).alpha(0.1),
      LearningRateScheduleOptions().name("cosine_restarts").first_decay_steps(7).t_mul(1.0).m_mul(0.8),
      LearningRateScheduleOptions().name("inverse_time").decay_steps(5).decay_rate(0.5),
      LearningRateScheduleOptions().name("inverse_time").decay_steps(5).decay_rate(0.5).staircase(true),
      LearningRateScheduleOptions().name("polynomial").decay_steps(20).end_learning_rate(0.01).power(2.0),
      LearningRateScheduleOptions().name("polynomial").decay_steps(20).end_learning_rate(0.01).power(0.5).cycle(true),
  };
  nlohmann::json input = nlohmann::json::array();
  for (const auto& s : schedules) input.push_back(schedule_config(s, 0.1));
  const auto ref = torchfit::testing::run_python({"math"}, R"(
def restarts(c, step):
    lr0, first, t_mul, m_mul, alpha = c["initial_learning_rate"], c["first_decay_steps"], c["t_mul"], c["m_mul"], c["alpha"]
    frac = step / first
    if t_mul == 1.0:
        i = math.floor(frac); frac -= i
    else:
        i = math.floor(math.log(1.0 - frac * (1.0 - t_mul)) / math.log(t_mul))
        sum_r = (1.0 - t_mul ** i) / (1.0 - t_mul)
        frac = (frac - sum_r) / t_mul ** i
    cosine = 0.5 * m_mul ** i * (1.0 + math.cos(math.pi * frac))
    return lr0 * ((1 - alpha) * cosine + alpha)
def inverse_time(c, step):
    p = step / c["decay_steps"]
    if c["staircase"]: p = math.floor(p)
    return c["initial_learning_rate"] / (1 + c["decay_rate"] * p)
def polynomial(c, step):
    lr0, end, power, d = c["initial_learning_rate"], c["end_learning_rate"], c["power"], c["decay_steps"]
    if c["cycle"]:
        d = d * (1.0 if step == 0 else math.ceil(step / d))
    else:
        step = min(step, d)
    return (lr0 - end) * (1 - step / d) ** power + end
f = {"CosineDecayRestarts": restarts, "InverseTimeDecay": inverse_time, "PolynomialDecay": polynomial}
out = [[f[s["class_name"]](s["config"], step) for step in range(71)] for s in data]
)",
                                                 input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (size_t k = 0; k < schedules.size(); ++k) {
    SCOPED_TRACE(input[k].dump());
    for (int64_t step = 0; step <= 70; ++step)
      EXPECT_NEAR(schedule_learning_rate(schedules[k], 0.1, step), ref.out[k][step].get<double>(), 1e-12) << step;
    const auto read = LearningRateScheduleOptions::from_config(input[k]);
    EXPECT_EQ(schedule_config(read, 0.5), input[k]);
  }
  EXPECT_THROW(check_schedule(LearningRateScheduleOptions().name("cosine_restarts")),
               ConfigError);  // no first_decay_steps
  EXPECT_THROW(check_schedule(LearningRateScheduleOptions().name("polynomial").decay_steps(3).end_learning_rate(-1)),
               ConfigError);
}
