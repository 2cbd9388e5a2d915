// CallbackList and the hooks fit() calls: order, indices and the documented log keys.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include <torchfit/error.h>
#include <torchfit/training/callbacks.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;

namespace {

// Records every hook call as text and every batch's logs.
struct Recorder : Callback {
  std::vector<std::string> calls;
  std::vector<Logs> batch_logs;
  FitParams seen_params;
  void on_train_begin(const Logs&) override {
    calls.push_back("train_begin");
    seen_params = params();
  }
  void on_epoch_begin(int e, const Logs& l) override { calls.push_back("epoch_begin " + std::to_string(e)); }
  void on_train_batch_end(int64_t b, const Logs& l) override {
    calls.push_back("batch " + std::to_string(b));
    batch_logs.push_back(l);
  }
  void on_epoch_end(int e, const Logs&) override { calls.push_back("epoch_end " + std::to_string(e)); }
  void on_train_end(const Logs&) override { calls.push_back("train_end"); }
  void on_train_error(const std::string& m) override { calls.push_back("error " + m); }
};

struct HookData {
  at::Tensor x, y;
};
HookData data10() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  return {at::rand({10, 4}, gen), at::one_hot(at::arange(10) % 3, 3).to(at::kFloat)};
}

Trainer hooks_trainer() {
  at::manual_seed(0);
  return Trainer(torchfit::testing::tiny_mlp(), CompileOptions().metrics({"accuracy"}));
}

}  // namespace

TEST(CallbackList, HooksInOrderWithZeroBasedIndicesAndParams) {
  auto t = hooks_trainer();
  auto [x, y] = data10();
  data::TensorIterator it(x, y, 4);
  auto rec = std::make_shared<Recorder>();
  t.fit(it, FitOptions().epochs(2).verbose(0).warmup_steps(1).callbacks({rec}));
  EXPECT_EQ(rec->calls,
            (std::vector<std::string>{"train_begin", "epoch_begin 0", "batch 0", "batch 1", "batch 2", "epoch_end 0",
                                      "epoch_begin 1", "batch 0", "batch 1", "batch 2", "epoch_end 1", "train_end"}));
  EXPECT_EQ(rec->seen_params.epochs, 2);
  EXPECT_EQ(rec->seen_params.steps, 3);
  EXPECT_EQ(rec->seen_params.batch_size, 4);
  EXPECT_EQ(rec->seen_params.warmup_steps, 1);
  EXPECT_FALSE(rec->seen_params.validation);
}

TEST(CallbackList, BatchLogsHoldRunningMeansBatchValuesAndTimings) {
  auto t = hooks_trainer();
  auto [x, y] = data10();
  data::TensorIterator it(x, y, 4);
  auto rec = std::make_shared<Recorder>();
  History h = t.fit(it, FitOptions().epochs(1).verbose(0).warmup_steps(1).callbacks({rec}));
  ASSERT_EQ(rec->batch_logs.size(), 3u);
  // Sizes 4, 4, 2: the running mean after the last batch is the epoch's loss (weighted by size).
  double weighted = 0;
  for (const auto& l : rec->batch_logs) {
    for (const char* k : {"loss", "accuracy", "batch_loss", "batch_accuracy", "size", "data_ms", "h2d_ms", "compute_ms",
                          "step_ms", "warmup"}) {
      EXPECT_TRUE(l.count(k)) << k;
    }
    weighted += l.at("batch_loss") * l.at("size");
  }
  EXPECT_EQ(rec->batch_logs[2].at("size"), 2.0);
  EXPECT_DOUBLE_EQ(rec->batch_logs[0].at("loss"), rec->batch_logs[0].at("batch_loss"));
  EXPECT_NEAR(rec->batch_logs[2].at("loss"), weighted / 10.0, 1e-12);
  EXPECT_DOUBLE_EQ(rec->batch_logs[2].at("loss"), h.last("loss"));
  EXPECT_EQ(rec->batch_logs[0].at("warmup"), 1.0);
  EXPECT_EQ(rec->batch_logs[1].at("warmup"), 0.0);
  EXPECT_GE(rec->batch_logs[1].at("step_ms"), rec->batch_logs[1].at("compute_ms"));
}

TEST(CallbackList, ErrorInAHookReachesOnTrainErrorAndIsRethrown) {
  struct Thrower : Callback {
    void on_epoch_end(int, const Logs&) override { throw IoError("disk full in test"); }
  };
  auto t = hooks_trainer();
  auto [x, y] = data10();
  data::TensorIterator it(x, y, 4);
  auto rec = std::make_shared<Recorder>();
  EXPECT_THROW(t.fit(it, FitOptions().epochs(2).verbose(0).callbacks({std::make_shared<Thrower>(), rec})), IoError);
  EXPECT_EQ(rec->calls.back(), "error disk full in test");
  EXPECT_THROW(t.fit(it, FitOptions().verbose(0).callbacks({nullptr})), ConfigError);
}

TEST(ProgbarLogger, PrintsTheKerasLinesThroughFit) {
  auto t = hooks_trainer();
  auto [x, y] = data10();
  data::TensorIterator it(x, y, 4);
  std::ostringstream out;
  double now = 0;
  t.fit(it, FitOptions().epochs(2).verbose(2).out(&out).dynamic(false).clock([&] { return now += 0.5; }));
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("Epoch 1/2\n3/3 - ", 0), 0u) << s;
  EXPECT_NE(s.find("\nEpoch 2/2\n3/3 - "), std::string::npos) << s;
  EXPECT_NE(s.find(" - loss: "), std::string::npos);
  EXPECT_NE(s.find(" - accuracy: "), std::string::npos);
  EXPECT_EQ(s.find("val_"), std::string::npos);
  std::ostringstream silent;
  t.fit(it, FitOptions().epochs(2).verbose(0).out(&silent));
  EXPECT_EQ(silent.str(), "");
}
