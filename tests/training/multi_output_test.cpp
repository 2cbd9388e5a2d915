// fit/evaluate/predict of a model with two inputs and two outputs (Keras's fit(x=[a, b], y=[c, d]) with
// per-output losses, loss_weights and metrics) against PyTorch-Python training the same weights on the same
// batches with SGD; Keras 3's log names (keras/src/trainers/compile_utils.py), exact resume, and the errors.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <filesystem>
#include <future>

#include <torchfit/data/arrays.h>
#include <torchfit/distributed/environment.h>
#include <torchfit/distributed/process_group.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/merge.h>
#include <torchfit/training/trainer.h>

#include "support/error_message.h"
#include "support/free_port.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit::multi_output_test {
using data::Arrays;

namespace {

struct Recorder : Callback {
  std::vector<double> losses;
  std::vector<Logs> epochs;
  void on_train_batch_end(int64_t, const Logs& logs) override { losses.push_back(logs.at("batch_loss")); }
  void on_epoch_end(int, const Logs& logs) override { epochs.push_back(logs); }
};

// a (6) → Dense(8, relu) "hidden"; [hidden, b (3)] concatenated → Dense(3, softmax) "cls" and
// Dense(1, sigmoid) "flag".
Model two_heads() {
  auto a = Input({6}, "a"), b = Input({3}, "b");
  auto h = Dense(DenseOptions(8).activation("relu").name("hidden"))->call(a);
  auto c = Concatenate(ConcatenateOptions().name("joined"))->call({h, b});
  auto cls = Dense(DenseOptions(3).activation("softmax").name("cls"))->call(c);
  auto flag = Dense(DenseOptions(1).activation("sigmoid").name("flag"))->call(c);
  return Model({a, b}, {cls, flag}, "two_heads");
}

CompileOptions two_head_compile(double lr) {
  return CompileOptions()
      .output_losses({"sparse_categorical_crossentropy", "binary_crossentropy"})
      .loss_weights({1.0, 0.5})
      .output_metrics({{"cls", {"accuracy"}}, {"flag", "accuracy"}})
      .optimizer(OptimizerOptions().name("sgd").learning_rate(lr));
}

nlohmann::json layer_params(Model& model) {
  nlohmann::json p = nlohmann::json::object();
  for (const char* name : {"hidden", "cls", "flag"}) {
    p[name] = nlohmann::json::array();
    for (const auto& t : model->get_layer(name)->parameters())
      p[name].push_back(torchfit::testing::to_json(t.detach()));
  }
  return p;
}

struct Problem {
  at::Tensor a, b, cls, flag, w;
};

Problem problem(int64_t n, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return {at::randn({n, 6}, gen), at::randn({n, 3}, gen), at::randint(0, 3, {n}, gen, at::kLong),
          at::randint(0, 2, {n, 1}, gen).to(at::kFloat), at::rand({n}, gen) * 2};
}

// PyTorch: the same graph (kernels (units, in) as torchfit stores them), SGD on the given batches. Each
// output's loss is Keras's sum_over_batch_size of the weighted values (Σ w·v / n); the total is
// cls + 0.5 · flag; the per-output epoch values are means weighted by batch size (Keras's Mean trackers).
const char* kTorchTwoHeads = R"(
import torch
P = {k: [torch.tensor(t, dtype=torch.float32, requires_grad=True) for t in v] for k, v in data["params"].items()}
def forward(a, b):
    h = torch.relu(a @ P["hidden"][0].T + P["hidden"][1])
    c = torch.cat([h, b], 1)
    return c @ P["cls"][0].T + P["cls"][1], c @ P["flag"][0].T + P["flag"][1]
a, b, flag, w = (torch.tensor(data[k], dtype=torch.float32) for k in ("a", "b", "flag", "w"))
cls = torch.tensor(data["cls"], dtype=torch.long)
def losses(idx):
    zc, zf = forward(a[idx], b[idx])
    n = len(idx)
    lc = (torch.nn.functional.cross_entropy(zc, cls[idx], reduction="none") * w[idx]).sum() / n
    lf = (torch.nn.functional.binary_cross_entropy_with_logits(zf, flag[idx], reduction="none").mean(-1)
          * w[idx]).sum() / n
    hit_c = (zc.argmax(1) == cls[idx]).float()
    hit_f = ((zf > 0).float() == flag[idx]).float().mean(-1)
    return lc, lf, hit_c, hit_f
WEIGHTED = data.get("weighted", False)  # weighted_metrics=[accuracy] per output: Σ w·hit / Σ w
def epoch_logs(batches, train):
    s = {"loss": 0.0, "cls_loss": 0.0, "flag_loss": 0.0, "cls_accuracy": 0.0, "flag_accuracy": 0.0}
    weighted = {"cls_weighted_accuracy": 0.0, "flag_weighted_accuracy": 0.0}
    n, sw = 0, 0.0
    for idx in batches:
        if train:
            opt.zero_grad()
        lc, lf, ac, af = losses(idx)
        total = lc + 0.5 * lf
        if train:
            total.backward()
            opt.step()
            steps.append(total.item())
        for k, v in (("loss", total.item()), ("cls_loss", lc.item()), ("flag_loss", lf.item())):
            s[k] += v * len(idx)
        s["cls_accuracy"] += ac.sum().item()
        s["flag_accuracy"] += af.sum().item()
        weighted["cls_weighted_accuracy"] += (w[idx] * ac).sum().item()
        weighted["flag_weighted_accuracy"] += (w[idx] * af).sum().item()
        n += len(idx)
        sw += w[idx].sum().item()
    out = {k: v / n for k, v in s.items()}
    if WEIGHTED:
        out.update({k: v / sw for k, v in weighted.items()})
    return out
opt = torch.optim.SGD([t for v in P.values() for t in v], lr=data["lr"])
steps, epochs = [], []
for epoch in range(data["epochs"]):
    logs = epoch_logs(data["batches"], True)
    with torch.no_grad():
        logs.update({"val_" + k: v for k, v in epoch_logs(data["val"], False).items()})
    epochs.append(logs)
with torch.no_grad():
    zc, zf = forward(a, b)
out = {"steps": steps, "epochs": epochs, "cls": torch.softmax(zc, 1).tolist(), "flag": torch.sigmoid(zf).tolist()}
)";

std::vector<std::vector<int64_t>> ranges(int64_t begin, int64_t end, int64_t batch) {
  std::vector<std::vector<int64_t>> out;
  for (int64_t s = begin; s < end; s += batch) {
    out.emplace_back();
    for (int64_t i = s; i < std::min(end, s + batch); ++i) out.back().push_back(i);
  }
  return out;
}

std::string config_error(const std::function<void()>& f) {
  return testing::error_message<ConfigError>(f, "ConfigError");
}

// kTorchTwoHeads's input for 14 samples trained with validation_split 0.25 (floor(14 · 0.75) = 10 train in
// batches of 4, 4 validate): the trainer's initial weights, the data and SGD's learning rate 0.1.
nlohmann::json torch_input(Trainer& t, const Problem& d, int epochs) {
  return {{"params", layer_params(t.model())},
          {"a", torchfit::testing::to_json(d.a)},
          {"b", torchfit::testing::to_json(d.b)},
          {"cls", torchfit::testing::to_json(d.cls)},
          {"flag", torchfit::testing::to_json(d.flag)},
          {"w", torchfit::testing::to_json(d.w)},
          {"lr", 0.1},
          {"epochs", epochs},
          {"batches", ranges(0, 10, 4)},
          {"val", ranges(10, 14, 4)}};
}

// Every log of the reference's epochs, within float rounding, in the recorded epochs.
void expect_epochs(const std::vector<Logs>& got, const nlohmann::json& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t e = 0; e < got.size(); ++e) {
    for (const auto& [key, value] : want[e].items()) {
      ASSERT_TRUE(got[e].count(key)) << "no log '" << key << "'";
      EXPECT_NEAR(got[e].at(key), value.get<double>(), 1e-5 * (1 + std::abs(value.get<double>())))
          << "epoch " << e << " " << key;
    }
  }
}

}  // namespace

TEST(MultiOutput, TwoInputsTwoOutputsTrainAsPyTorchWithKerasLogNames) {
  const Problem d = problem(14, 5);
  at::manual_seed(9);
  Trainer t(two_heads(), two_head_compile(0.1));
  EXPECT_EQ(t.metric_names(),
            (std::vector<std::string>{"cls_accuracy", "flag_accuracy", "cls_loss", "flag_loss"}));  // Keras 3's order
  const nlohmann::json input = torch_input(t, d, 3);
  auto rec = std::make_shared<Recorder>();
  const History h = t.fit(Arrays({d.a, d.b}, {d.cls, d.flag}, d.w),
                          FitOptions().epochs(3).verbose(0).validation_split(0.25).callbacks({rec}),
                          ArrayOptions().batch_size(4).shuffle(false));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchTwoHeads, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto want = ref.out["steps"].get<std::vector<double>>();
  ASSERT_EQ(rec->losses.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(rec->losses[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
  ASSERT_EQ(rec->epochs.size(), 3u);
  expect_epochs(rec->epochs, ref.out["epochs"]);
  EXPECT_EQ(h.history.at("val_flag_loss").size(), 3u);
  // predict gives both outputs (probabilities) at the trained weights.
  const auto outs = t.predict_outputs(Arrays({d.a, d.b}, {}), 5);
  ASSERT_EQ(outs.size(), 2u);
  const at::Tensor want_cls = at::tensor(ref.out["cls"].get<std::vector<std::vector<float>>>()[0]);
  EXPECT_EQ(outs[0].sizes().vec(), (std::vector<int64_t>{14, 3}));
  EXPECT_EQ(outs[1].sizes().vec(), (std::vector<int64_t>{14, 1}));
  EXPECT_TRUE(at::allclose(outs[0][0], want_cls, 1e-5, 1e-6)) << outs[0][0] << want_cls;
  for (int64_t i = 0; i < 14; ++i) {
    EXPECT_NEAR(outs[1][i][0].item<double>(), ref.out["flag"][i][0].get<double>(), 1e-5) << i;
  }
  // evaluate on the validation part gives the last epoch's validation logs.
  const Logs ev = t.evaluate(
      Arrays({d.a.slice(0, 10), d.b.slice(0, 10)}, {d.cls.slice(0, 10), d.flag.slice(0, 10)}, d.w.slice(0, 10)), 4);
  EXPECT_TRUE(ev.count("cls_loss") && ev.count("flag_accuracy"));
  EXPECT_NEAR(ev.at("loss"), ev.at("cls_loss") + 0.5 * ev.at("flag_loss"), 1e-6) << "the total is the weighted sum";
}

// Keras's weighted_metrics on two outputs: the same metric weighted and not, logged as
// "<output>_weighted_accuracy" after the unweighted ones; the sample weights weigh them in training and
// validation, against PyTorch-Python's Σ w·hit / Σ w.
TEST(MultiOutput, WeightedMetricsReadTheSampleWeightsUnderKerasNames) {
  const Problem d = problem(14, 6);
  at::manual_seed(4);
  Trainer t(two_heads(), two_head_compile(0.1).weighted_metrics({{"cls", "accuracy"}, {"flag", {"accuracy"}}}));
  EXPECT_EQ(t.metric_names(), (std::vector<std::string>{"cls_accuracy", "flag_accuracy", "cls_weighted_accuracy",
                                                        "flag_weighted_accuracy", "cls_loss", "flag_loss"}));
  nlohmann::json input = torch_input(t, d, 2);
  input["weighted"] = true;
  auto rec = std::make_shared<Recorder>();
  t.fit(Arrays({d.a, d.b}, {d.cls, d.flag}, d.w),
        FitOptions().epochs(2).verbose(0).validation_split(0.25).callbacks({rec}),
        ArrayOptions().batch_size(4).shuffle(false));
  const auto ref = torchfit::testing::run_python({"torch"}, kTorchTwoHeads, input);
  TORCHFIT_REQUIRE_PYTHON(ref);
  ASSERT_EQ(rec->epochs.size(), 2u);
  expect_epochs(rec->epochs, ref.out["epochs"]);
  EXPECT_NE(rec->epochs[1].at("cls_weighted_accuracy"), rec->epochs[1].at("cls_accuracy"));
  // A weighted_metrics list of another length than the outputs is Keras's error.
  EXPECT_NE(config_error([] {
              Trainer(two_heads(), two_head_compile(0.1).weighted_metrics({"accuracy"}));
            }).find("weighted_metrics has 1 entries but the model has 2 outputs"),
            std::string::npos);
}

TEST(MultiOutput, ArraysByNameAreTheModelsOrderAndResumeContinuesExactly) {
  const Problem d = problem(23, 8);
  Model order = two_heads();
  EXPECT_EQ(order->input_names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(order->output_names(), (std::vector<std::string>{"cls", "flag"}));
  const Arrays named =
      data::arrays_by_name({{"b", d.b}, {"a", d.a}}, {{"flag", d.flag}, {"cls", d.cls}}, {"a", "b"}, {"cls", "flag"});
  EXPECT_TRUE(named.x.equal(d.a) && named.more_x.at(0).equal(d.b));
  EXPECT_TRUE(named.y.equal(d.cls) && named.more_y.at(0).equal(d.flag));
  auto fit = [&](Trainer& t, int epochs, const std::string& resume) {
    auto rec = std::make_shared<Recorder>();
    FitOptions o = FitOptions().epochs(epochs).verbose(0).callbacks({rec});
    if (!resume.empty()) o.resume_from(resume);
    t.fit(named, o, ArrayOptions().batch_size(5).shuffle(true).seed(4));
    return rec->losses;
  };
  at::manual_seed(2);
  Trainer whole(two_heads(), two_head_compile(0.05));
  const auto all = fit(whole, 3, "");
  testing::TempDir dir;
  const std::string ckpt = (dir.path / "two_heads.ckpt").string();
  at::manual_seed(2);
  Trainer first(two_heads(), two_head_compile(0.05));
  const auto one = fit(first, 1, "");
  first.save_checkpoint(ckpt);
  at::manual_seed(77);  // other initial weights: the checkpoint's must replace them
  Trainer resumed(two_heads(), two_head_compile(0.05));
  const auto rest = fit(resumed, 3, ckpt);
  ASSERT_EQ(one.size() + rest.size(), all.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i], all[i]) << i;
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_EQ(rest[i], all[one.size() + i]) << "resumed step " << i;
}

TEST(MultiOutput, OneLossForEveryOutputAndAnOutputWithoutALoss) {
  const Problem d = problem(8, 3);
  at::manual_seed(1);
  // One loss for two outputs applies to each (Keras); cls gets mse on its one-hot target here.
  Trainer t(two_heads(), CompileOptions().loss("mse").optimizer(OptimizerOptions().name("sgd").learning_rate(0.01)));
  EXPECT_EQ(t.metric_names(), (std::vector<std::string>{"cls_loss", "flag_loss"}));
  const at::Tensor onehot = at::one_hot(d.cls, 3).to(at::kFloat);
  const Logs e = t.evaluate(Arrays({d.a, d.b}, {onehot, d.flag}), 8);
  const auto outs = t.predict_outputs(Arrays({d.a, d.b}, {}), 8);
  const double cls_mse = (outs[0] - onehot).pow(2).mean().item<double>();
  const double flag_mse = (outs[1] - d.flag).pow(2).mean().item<double>();
  EXPECT_NEAR(e.at("cls_loss"), cls_mse, 1e-6);
  EXPECT_NEAR(e.at("flag_loss"), flag_mse, 1e-6);
  EXPECT_NEAR(e.at("loss"), cls_mse + flag_mse, 1e-6);
  // A null loss leaves an output out of the total; with one loss left no per-output loss is logged.
  Trainer only(two_heads(), CompileOptions()
                                .output_losses({{"flag", "binary_crossentropy"}})
                                .output_metrics({{"cls", "accuracy"}})
                                .optimizer(OptimizerOptions().name("sgd")));
  EXPECT_EQ(only.metric_names(), (std::vector<std::string>{"cls_accuracy"}));
  const Logs o = only.evaluate(Arrays({d.a, d.b}, {d.cls, d.flag}), 8);
  const auto p = only.predict_outputs(Arrays({d.a, d.b}, {}), 8);
  const double bce =
      -(d.flag * p[1].clamp(1e-7, 1 - 1e-7).log() + (1 - d.flag) * (1 - p[1].clamp(1e-7, 1 - 1e-7)).log())
           .mean()
           .item<double>();
  EXPECT_NEAR(o.at("loss"), bce, 1e-5);
  EXPECT_FALSE(o.count("flag_loss"));
  // The output without a loss: "accuracy" is categorical for cls's 3 units (sparse targets read), binary
  // (threshold 0.5) for flag's one unit — Keras 3's get_metric decides by the shapes.
  Trainer no_flag_loss(two_heads(), CompileOptions()
                                        .output_losses({"sparse_categorical_crossentropy", nullptr})
                                        .output_metrics({"accuracy", "accuracy"})
                                        .optimizer(OptimizerOptions().name("sgd")));
  const Logs n = no_flag_loss.evaluate(Arrays({d.a, d.b}, {d.cls, d.flag}), 8);
  const auto q = no_flag_loss.predict_outputs(Arrays({d.a, d.b}, {}), 8);
  EXPECT_NEAR(n.at("flag_accuracy"), q[1].gt(0.5).to(at::kFloat).eq(d.flag).to(at::kFloat).mean().item<double>(), 1e-9);
  EXPECT_NEAR(n.at("cls_accuracy"), q[0].argmax(1).eq(d.cls).to(at::kFloat).mean().item<double>(), 1e-9);
}

TEST(MultiOutput, BadSettingsAndDataAreErrorsNamingTheOutput) {
  const Problem d = problem(6, 2);
  auto sgd = OptimizerOptions().name("sgd");
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().output_losses({"mse"}).optimizer(sgd));
            }).find("output_losses has 1 entries but the model has 2 outputs ('cls', 'flag')"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().output_losses({{"class", "mse"}}).optimizer(sgd));
            }).find("names the output 'class', which the model does not have; its outputs are 'cls', 'flag'"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().metrics({"accuracy"}).optimizer(sgd));
            }).find("a flat metrics list gives one metric per output"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().loss_weights(0.5).optimizer(sgd));
            }).find("loss_weights is one number but the model has 2 outputs"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().loss_weights({{"cls", 1.0}}).optimizer(sgd));
            }).find("loss_weights gives no weight for output 'flag'"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().output_losses({nullptr, nullptr}).optimizer(sgd));
            }).find("no output has a loss"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              Trainer(two_heads(), CompileOptions().output_losses({"mse", "no_such_loss"}).optimizer(sgd));
            }).find("the loss of output 'flag': unknown loss 'no_such_loss'"),
            std::string::npos);
  Trainer t(two_heads(), CompileOptions().loss("mse").optimizer(sgd));
  EXPECT_NE(config_error([&] {
              t.fit(Arrays({d.a, d.b}, {d.flag}), FitOptions().verbose(0));
            }).find("the model has 2 outputs ('cls', 'flag') but the batch has 1 targets"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              t.fit(Arrays({d.a}, {d.flag, d.flag}), FitOptions().verbose(0));
            }).find("takes 2 input tensor(s), got 1"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              t.fit(Arrays({d.a, d.b.slice(0, 0, 4)}, {d.flag, d.flag}), FitOptions().verbose(0));
            }).find("x has 6 samples but x[1] has 4"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              t.fit(Arrays({d.a, d.b}, {d.cls, d.flag}), FitOptions().verbose(0).class_weight({{0, 1.0}, {1, 2.0}}));
            }).find("class_weight is for a model with one output"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              data::arrays_by_name({{"a", d.a}}, {}, {"a", "b"}, {"cls", "flag"});
            }).find("no array is given for the input 'b'"),
            std::string::npos);
  EXPECT_NE(config_error([&] {
              data::arrays_by_name({{"a", d.a}, {"b", d.b}, {"c", d.b}}, {}, {"a", "b"}, {"cls", "flag"});
            }).find("the input 'c', which the model does not have; its inputs are 'a', 'b'"),
            std::string::npos);
  EXPECT_NE(config_error([&] { t.predict(d.a, 3); }).find("predict"), std::string::npos);
}

}  // namespace torchfit::multi_output_test

namespace torchfit::multi_output_test {

// Data-parallel: two ranks (Gloo on loopback, one thread each) train the two-head model on the same
// arrays as one process — the shards carry both inputs and both targets, the gradients are the global
// batch's — and end with the one process's weights and per-output validation logs.
TEST(MultiOutput, TwoRanksTrainWhatOneProcessTrains) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Problem d = problem(32, 12);
  const Arrays arrays({d.a, d.b}, {d.cls, d.flag}, d.w);
  auto fresh = [] {
    at::manual_seed(21);
    return two_heads();
  };
  auto fit = [&](Model m, std::shared_ptr<distributed::ProcessGroup> group) {
    Trainer t(m, two_head_compile(0.1));
    FitOptions o = FitOptions().epochs(2).verbose(0).validation_split(0.25);
    if (group) o.process_group(group);
    const History h = t.fit(arrays, o, ArrayOptions().batch_size(8).shuffle(true).seed(3));
    std::vector<at::Tensor> w;
    for (const auto& p : t.model()->parameters()) w.push_back(p.detach().clone());
    return std::make_pair(w, h.history.at("val_flag_accuracy").back());
  };
  const auto one = fit(fresh(), nullptr);
  const int port = torchfit::testing::free_port();
  // Built here, one after the other: the global generator seeds them, and two threads would interleave it.
  Model models[2] = {fresh(), fresh()};
  auto rank = [&](int r) {
    distributed::Environment env;
    env.rank = r;
    env.world_size = 2;
    env.master_addr = "127.0.0.1";
    env.master_port = port;
    distributed::ProcessGroupOptions options;
    options.timeout = std::chrono::seconds(30);
    return fit(models[r], distributed::ProcessGroup::create(env, options));
  };
  auto r0 = std::async(std::launch::async, rank, 0), r1 = std::async(std::launch::async, rank, 1);
  ASSERT_EQ(r0.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  ASSERT_EQ(r1.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  const auto w0 = r0.get(), w1 = r1.get();
  ASSERT_EQ(w0.first.size(), one.first.size());
  for (size_t i = 0; i < one.first.size(); ++i) {
    EXPECT_TRUE(at::equal(w0.first[i], w1.first[i])) << "parameter " << i << " differs between the ranks";
    EXPECT_LE((w0.first[i] - one.first[i]).abs().max().item<double>(), 1e-5) << "parameter " << i;
  }
  EXPECT_NEAR(w0.second, one.second, 1e-9) << "val_flag_accuracy";
}

// Mixed precision (mixed_bfloat16, the CPU's policy): both heads train under it; every step's loss stays
// within bfloat16's rounding of the float32 run's, the weights stay float32 and predict gives float32
// outputs for both heads.
TEST(MultiOutput, MixedBfloat16TrainsBothHeadsWithinBfloat16RoundingOfFloat32) {
  const Problem d = problem(24, 13);
  auto run = [&](const std::string& policy) {
    at::manual_seed(31);
    Model m = two_heads();
    m->set_dtype_policy(policy);
    Trainer t(m, two_head_compile(0.05));
    auto rec = std::make_shared<Recorder>();
    t.fit(Arrays({d.a, d.b}, {d.cls, d.flag}, d.w), FitOptions().epochs(2).verbose(0).callbacks({rec}),
          ArrayOptions().batch_size(8).shuffle(false));
    for (const auto& p : t.model()->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat) << policy;
    const auto outs = t.predict_outputs(Arrays({d.a, d.b}, {}), 8);
    EXPECT_EQ(outs.size(), 2u);
    for (const auto& o : outs) EXPECT_EQ(o.scalar_type(), at::kFloat) << policy;
    return rec->losses;
  };
  const auto f32 = run("float32"), bf16 = run("mixed_bfloat16");
  ASSERT_EQ(f32.size(), bf16.size());
  double largest = 0;
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_NEAR(bf16[i], f32[i], 0.03 * (1 + std::abs(f32[i]))) << "step " << i;
    largest = std::max(largest, std::abs(bf16[i] - f32[i]));
  }
  EXPECT_GT(largest, 0.0) << "bfloat16 computed exactly what float32 did: the policy was not applied";
}

}  // namespace torchfit::multi_output_test
