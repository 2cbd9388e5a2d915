// torchfit::distributed in one process: torchrun's environment parsed and refused, shards that add up
// to the whole batch, and two ranks (two threads, each its own Gloo group over loopback) that train to
// bit-identical weights, equal to one process's within 1e-5.
#include <gtest/gtest.h>

#include <unistd.h>

#include <functional>
#include <future>
#include <map>
#include <thread>

#include <torchfit/data/image_data_generator.h>
#include <torchfit/distributed/environment.h>
#include <torchfit/distributed/process_group.h>
#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

#include "support/free_port.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace torchfit::distributed_test {
namespace {

using distributed::Environment;
using torchfit::testing::free_port;

distributed::GetEnv env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::map<std::string, std::string> torchrun_vars() {
  return {{"RANK", "1"},
          {"WORLD_SIZE", "2"},
          {"LOCAL_RANK", "1"},
          {"LOCAL_WORLD_SIZE", "2"},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", "29500"}};
}

// The message of the ConfigError read_environment throws for `vars`.
std::string error_for(const std::map<std::string, std::string>& vars) {
  try {
    distributed::read_environment(env_of(vars));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(DistributedEnvironment, NoVariablesIsOneProcess) {
  EXPECT_FALSE(distributed::read_environment(env_of({})).has_value());
}

TEST(DistributedEnvironment, ReadsTorchrunVariables) {
  auto vars = torchrun_vars();
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  vars["TORCHELASTIC_RESTART_COUNT"] = "3";
  const auto e = distributed::read_environment(env_of(vars));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 1);
  EXPECT_EQ(e->world_size, 2);
  EXPECT_EQ(e->local_rank, 1);
  EXPECT_EQ(e->master_addr, "127.0.0.1");
  EXPECT_EQ(e->master_port, 29500);
  EXPECT_TRUE(e->agent_store);
  EXPECT_EQ(e->store_prefix(), "/worker/attempt_3");
}

TEST(DistributedEnvironment, ErrorsNameTheVariableAndValue) {
  auto vars = torchrun_vars();
  vars.erase("MASTER_PORT");
  EXPECT_NE(error_for(vars).find("MASTER_PORT is not set"), std::string::npos) << error_for(vars);
  vars = torchrun_vars();
  vars["MASTER_PORT"] = "29x";
  EXPECT_NE(error_for(vars).find("MASTER_PORT='29x'"), std::string::npos) << error_for(vars);
  vars["MASTER_PORT"] = "70000";
  EXPECT_NE(error_for(vars).find("MASTER_PORT='70000'"), std::string::npos);
  vars = torchrun_vars();
  vars["WORLD_SIZE"] = "two";
  EXPECT_NE(error_for(vars).find("WORLD_SIZE='two'"), std::string::npos) << error_for(vars);
  vars = torchrun_vars();
  vars["RANK"] = "2";
  EXPECT_NE(error_for(vars).find("RANK='2' is not an integer in [0, 1]"), std::string::npos) << error_for(vars);
  vars = torchrun_vars();
  vars.erase("WORLD_SIZE");
  EXPECT_NE(error_for(vars).find("RANK is set but WORLD_SIZE is not"), std::string::npos) << error_for(vars);
  vars = torchrun_vars();
  vars["MASTER_ADDR"] = "";
  EXPECT_NE(error_for(vars).find("MASTER_ADDR is empty"), std::string::npos) << error_for(vars);
}

TEST(DistributedShard, ShardsOfAugmentedBatchesAddUpToTheWholeBatch) {
  torchfit::testing::TempDir dir;
  torchfit::testing::make_tree(dir.path, {"a", "b"}, 7, 12);  // 14 images: batches 4, 4, 4, 2 per pass
  data::ImageDataGenerator gen(data::article_augmentation());
  const auto flow = data::FlowOptions().target_size({10, 10}).batch_size(4).seed(9).workers(1).verbose(false);
  auto whole = gen.flow_from_directory(dir.path.string(), flow);
  auto s0 = gen.flow_from_directory(dir.path.string(), flow);
  auto s1 = gen.flow_from_directory(dir.path.string(), flow);
  s0->shard(0, 2);
  s1->shard(1, 2);
  for (int b = 0; b < 6; ++b) {  // into the second pass (a new order)
    const data::Batch w = whole->next(), a = s0->next(), c = s1->next();
    EXPECT_EQ(a.global_size, w.size());
    EXPECT_TRUE(at::equal(at::cat({a.x, c.x}), w.x)) << "batch " << b;
    std::vector<int64_t> indices = a.indices;
    indices.insert(indices.end(), c.indices.begin(), c.indices.end());
    EXPECT_EQ(indices, w.indices);
  }
  EXPECT_THROW(s0->shard(2, 2), ConfigError);
}

namespace {

constexpr int kSteps = 5;

struct Data {
  at::Tensor x, y;
};

Data make_data() {
  at::manual_seed(11);
  Data d;
  d.x = at::randn({40, 4});
  d.y = at::one_hot(at::randint(3, {40}, at::kLong), 3).to(at::kFloat);
  return d;
}

// The tiny MLP with seeded weights; every call gives the same ones.
Sequential fresh_model() {
  at::manual_seed(5);
  return torchfit::testing::tiny_mlp();
}

FitOptions fit_options() { return FitOptions().epochs(1).steps_per_epoch(kSteps).verbose(0); }

std::vector<at::Tensor> weights(Trainer& t) {
  std::vector<at::Tensor> w;
  for (const auto& p : t.model()->parameters()) w.push_back(p.detach().clone());
  return w;
}

// Rank `rank` of a 2-rank group on 127.0.0.1:`port` (Gloo, `timeout_s`); blocks until both ranks join.
std::shared_ptr<distributed::ProcessGroup> loopback_group(int rank, int port, int timeout_s = 30) {
  Environment env;
  env.rank = rank;
  env.world_size = 2;
  env.master_addr = "127.0.0.1";
  env.master_port = port;
  distributed::ProcessGroupOptions options;
  options.timeout = std::chrono::seconds(timeout_s);
  return distributed::ProcessGroup::create(env, options);
}

// Trains rank `rank` of 2 on its own thread's group; returns its weights. `checkpoint`: rank 0 saves one.
std::vector<at::Tensor> train_rank(
    int rank, int port, Sequential model, const Data& d, const std::string& checkpoint,
    const CompileOptions& compile = CompileOptions().loss("categorical_crossentropy").metrics({"accuracy"})) {
  auto group = loopback_group(rank, port);
  Trainer trainer(model, compile);
  data::TensorIterator train(d.x, d.y, 8, /*shuffle=*/true, /*seed=*/3);
  History h = trainer.fit(train, fit_options().process_group(group));
  if (rank == 0 && !checkpoint.empty()) trainer.save_checkpoint(checkpoint);
  return weights(trainer);
}

}  // namespace

TEST(DataParallel, TwoRanksTrainWhatOneProcessTrains) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Data d = make_data();
  Trainer single(fresh_model(), CompileOptions().loss("categorical_crossentropy").metrics({"accuracy"}));
  data::TensorIterator train(d.x, d.y, 8, true, 3);
  single.fit(train, fit_options());
  const auto expected = weights(single);

  torchfit::testing::TempDir dir;
  const std::string ckpt = (dir.path / "two.ckpt").string();
  const int port = free_port();
  Sequential m0 = fresh_model(), m1 = fresh_model();
  auto r0 = std::async(std::launch::async, [&] { return train_rank(0, port, m0, d, ckpt); });
  auto r1 = std::async(std::launch::async, [&] { return train_rank(1, port, m1, d, ""); });
  ASSERT_EQ(r0.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  ASSERT_EQ(r1.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  const auto w0 = r0.get(), w1 = r1.get();
  ASSERT_EQ(w0.size(), expected.size());
  for (size_t i = 0; i < w0.size(); ++i) {
    EXPECT_TRUE(at::equal(w0[i], w1[i])) << "parameter " << i << " differs between the ranks";
    EXPECT_LE((w0[i] - expected[i]).abs().max().item<double>(), 1e-5) << "parameter " << i;
    EXPECT_FALSE(at::equal(w0[i], fresh_model()->parameters()[i])) << "parameter " << i << " did not train";
  }

  // A checkpoint of the 2-process run does not resume in one process.
  Trainer again(fresh_model(), CompileOptions().loss("categorical_crossentropy").metrics({"accuracy"}));
  data::TensorIterator source(d.x, d.y, 8, true, 3);
  try {
    again.fit(source, FitOptions().epochs(2).steps_per_epoch(kSteps).verbose(0).resume_from(ckpt));
    FAIL() << "resumed a 2-process checkpoint in 1 process";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("run of 2 process(es), this run has 1"), std::string::npos) << e.what();
  }
}

// Every optimizer of Keras 3's catalogue (with the options of the next section on some) updates the two
// ranks' replicas alike, and as one process training on the whole batches: the ranks' gradients are
// averaged before the update rule sees them, so its state (moments, accumulators, Adafactor's factored
// moments, Ftrl's z and n) is the one process's.
TEST(DataParallel, EveryOptimizerTrainsInTwoRanksAsInOneProcess) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Data d = make_data();
  const std::vector<OptimizerOptions> optimizers = {
      OptimizerOptions().name("adam").amsgrad(true),
      OptimizerOptions().name("adamw").clipnorm(0.5),
      OptimizerOptions().name("sgd").momentum(0.9).nesterov(true),
      OptimizerOptions().name("rmsprop").centered(true).momentum(0.5),
      OptimizerOptions().name("adagrad").learning_rate(0.05),
      OptimizerOptions().name("adadelta").learning_rate(1.0),
      OptimizerOptions().name("adamax").use_ema(true),
      OptimizerOptions().name("nadam").global_clipnorm(1.0),
      OptimizerOptions().name("lion").learning_rate(1e-4),
      OptimizerOptions().name("ftrl").learning_rate(0.1).l1_regularization_strength(0.01),
      OptimizerOptions().name("adafactor").learning_rate(0.05)};
  for (const auto& o : optimizers) {
    SCOPED_TRACE(o.name());
    const CompileOptions compile = CompileOptions().loss("categorical_crossentropy").optimizer(o);
    Trainer single(fresh_model(), compile);
    data::TensorIterator train(d.x, d.y, 8, true, 3);
    single.fit(train, fit_options());
    const auto expected = weights(single);
    const int port = free_port();
    Sequential m0 = fresh_model(), m1 = fresh_model();
    auto r0 = std::async(std::launch::async, [&] { return train_rank(0, port, m0, d, "", compile); });
    auto r1 = std::async(std::launch::async, [&] { return train_rank(1, port, m1, d, "", compile); });
    ASSERT_EQ(r0.wait_for(std::chrono::seconds(120)), std::future_status::ready);
    ASSERT_EQ(r1.wait_for(std::chrono::seconds(120)), std::future_status::ready);
    const auto w0 = r0.get(), w1 = r1.get();
    ASSERT_EQ(w0.size(), expected.size());
    double moved = 0;
    for (size_t i = 0; i < w0.size(); ++i) {
      EXPECT_TRUE(at::equal(w0[i], w1[i])) << "parameter " << i << " differs between the ranks";
      EXPECT_LE((w0[i] - expected[i]).abs().max().item<double>(), 1e-5) << "parameter " << i;
      moved = std::max(moved, (expected[i] - fresh_model()->parameters()[i]).abs().max().item<double>());
    }
    EXPECT_GT(moved, 1e-5) << "the optimizer did not move the weights";
  }
}

namespace {

// A custom step that also reports the batch's mean probability of class 0 (a mean over the samples).
class ReportingTrainer : public Trainer {
 public:
  using Trainer::Trainer;
  Logs train_step(const data::Batch& batch) override {
    const auto out = call_model(batch);
    const at::Tensor loss = compiled_loss(batch, out);
    minimize(loss);
    return {{"loss", loss.item<double>()}, {"p0", p0(out[0])}};
  }
  Logs test_step(const data::Batch& batch) override {
    const auto out = call_model(batch);
    return {{"loss", compiled_loss(batch, out).item<double>()}, {"p0", p0(out[0])}};
  }
  std::vector<std::string> step_names() const override { return {"p0"}; }

 private:
  double p0(const at::Tensor& out) const {
    return (compiled_outputs().logits() ? at::softmax(out, 1) : out).select(1, 0).mean().item<double>();
  }
};

}  // namespace

// A custom step's own values are the whole batch's in every rank (each shard's value weighted by its
// samples, as the loss), so both ranks log what one process logs — training and validation.
TEST(DataParallel, ACustomStepsValuesAreTheWholeBatchsInEveryRank) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Data d = make_data();
  const CompileOptions compile = CompileOptions().loss("categorical_crossentropy");
  const auto options = [](const std::shared_ptr<distributed::ProcessGroup>& group, data::BatchIterator* val) {
    FitOptions o = fit_options().validation_data(val).validation_steps(2);
    if (group) o.process_group(group);
    return o;
  };
  ReportingTrainer single(fresh_model(), compile);
  data::TensorIterator train(d.x, d.y, 8, true, 3), val(d.x.slice(0, 0, 16), d.y.slice(0, 0, 16), 8, false, 0);
  const History expected = single.fit(train, options(nullptr, &val));
  const int port = free_port();
  const Sequential models[2] = {fresh_model(), fresh_model()};  // here: one global generator, two threads
  auto rank = [&](int r) {
    ReportingTrainer t(models[r], compile);
    data::TensorIterator tr(d.x, d.y, 8, true, 3), va(d.x.slice(0, 0, 16), d.y.slice(0, 0, 16), 8, false, 0);
    return t.fit(tr, options(loopback_group(r, port), &va));
  };
  auto r0 = std::async(std::launch::async, rank, 0), r1 = std::async(std::launch::async, rank, 1);
  ASSERT_EQ(r0.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  ASSERT_EQ(r1.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  const History h0 = r0.get(), h1 = r1.get();
  for (const char* key : {"p0", "val_p0", "loss", "val_loss"}) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(h0.history.count(key) && h1.history.count(key) && expected.history.count(key));
    EXPECT_EQ(h0.history.at(key), h1.history.at(key)) << "the ranks log different values";
    EXPECT_NEAR(h0.history.at(key).back(), expected.history.at(key).back(), 1e-6);
  }
}

// Runs `fit_rank(rank, group)` for ranks 0 and 1, each on its own thread with a loopback group; returns
// each rank's ConfigError message ("(no error)" when it returned).
std::pair<std::string, std::string> config_errors_of_two_ranks(
    const std::function<void(int, std::shared_ptr<distributed::ProcessGroup>)>& fit_rank) {
  const int port = free_port();
  auto rank = [&](int r) {
    try {
      fit_rank(r, loopback_group(r, port));
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  auto a = std::async(std::launch::async, rank, 0), b = std::async(std::launch::async, rank, 1);
  EXPECT_EQ(a.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(b.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  return {a.get(), b.get()};
}

TEST(DataParallel, BatchThatDoesNotSplitIsRefused) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Data d = make_data();
  const auto [on0, on1] = config_errors_of_two_ranks([&](int, std::shared_ptr<distributed::ProcessGroup> group) {
    Trainer trainer(fresh_model(), CompileOptions().loss("categorical_crossentropy"));
    data::TensorIterator train(d.x, d.y, 7);
    trainer.fit(train, fit_options().process_group(group));
  });
  for (const std::string& message : {on0, on1})
    EXPECT_NE(message.find("batch size 7 is the global batch and must split evenly over the 2 processes"),
              std::string::npos)
        << message;
}

TEST(DataParallel, RanksStartedWithOtherSettingsAreRefusedNamingTheDifference) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  const Data d = make_data();
  // Rank 1 shuffles with another seed and has another learning rate: both ranks refuse before any step.
  const auto [on0, on1] = config_errors_of_two_ranks([&](int r, std::shared_ptr<distributed::ProcessGroup> group) {
    OptimizerOptions adam;
    adam.learning_rate(r == 0 ? 0.001 : 0.5);
    Trainer trainer(fresh_model(), CompileOptions().loss("categorical_crossentropy").optimizer(adam));
    data::TensorIterator train(d.x, d.y, 8, /*shuffle=*/true, /*seed=*/r == 0 ? 3 : 4);
    trainer.fit(train, fit_options().process_group(group));
  });
  EXPECT_NE(on0.find("data-parallel: rank(s) 1 were started with other settings than rank 0"), std::string::npos)
      << on0;
  EXPECT_NE(on1.find("data-parallel: rank 1 was started with other settings than rank 0: "), std::string::npos) << on1;
  EXPECT_NE(on1.find("data seed: rank 0 has 3, this rank has 4"), std::string::npos) << on1;
  EXPECT_NE(on1.find("learning rate: rank 0 has 0.001, this rank has 0.5"), std::string::npos) << on1;
}

namespace {
// A leftover process on a port: listens (the kernel completes connections) and never answers.
struct SilentListener {
  int fd = -1, port = 0;
  SilentListener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 16);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~SilentListener() { close(fd); }
};

std::string join_error(int rank, int port, int timeout_s) {
  try {
    loopback_group(rank, port, timeout_s);
  } catch (const distributed::CommunicationError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// Issue 26: a process that listens on MASTER_PORT and never answers hung rank 1 forever (c10d's store
// client has no limit there). Every rank now fails within --dist-timeout naming the address and itself.
TEST(DistributedRendezvous, ASilentProcessOnMasterPortFailsEachRankNamingAddressAndRank) {
  if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
  SilentListener silent;
  const std::string where = "MASTER_ADDR:MASTER_PORT 127.0.0.1:" + std::to_string(silent.port);
  const std::string rank1 = join_error(1, silent.port, 2);
  EXPECT_NE(rank1.find("rank 1 of 2"), std::string::npos) << rank1;
  EXPECT_NE(rank1.find(where), std::string::npos) << rank1;
  EXPECT_NE(rank1.find("within 2 s"), std::string::npos) << rank1;
  // Rank 0 cannot host the store on a busy port: it fails at once and says how long it took, not
  // "within <timeout>".
  const std::string rank0 = join_error(0, silent.port, 20);
  EXPECT_NE(rank0.find("rank 0 of 2"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find(where), std::string::npos) << rank0;
  EXPECT_EQ(rank0.find("within 20 s"), std::string::npos) << rank0;
  EXPECT_NE(rank0.find("failed after"), std::string::npos) << rank0;
}

}  // namespace torchfit::distributed_test
