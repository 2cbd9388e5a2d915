// Resume: 2 epochs in one run equal 1 epoch + checkpoint + resume for 1 epoch (same per-step losses and
// final weights), also from the middle of an epoch; Ctrl-C (request_interrupt) stops after the step.
#include <gtest/gtest.h>

#include <torchfit/io/checkpoint.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"

using namespace torchfit;

namespace {

struct Data {
  at::Tensor x, y;
};
Data make_data() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  auto x = at::rand({40, 3, 16, 16}, gen);
  auto y = at::one_hot(at::arange(40) % 3, 3).to(at::kFloat);
  return {x, y};
}

std::unique_ptr<Trainer> fresh_trainer() {
  at::manual_seed(11);  // same initial weights, same dropout stream
  return std::make_unique<Trainer>(seed_cnn(16, 3, 8), CompileOptions().metrics({"accuracy"}));
}


FitOptions opts(int epochs) {
  return FitOptions().epochs(epochs).steps_per_epoch(4).validation_steps(2).verbose(0);
}

void expect_same_weights(Trainer& a, Trainer& b) {
  auto pa = a.model()->named_parameters();
  auto pb = b.model()->named_parameters();
  for (const auto& p : pa) {
    EXPECT_LT((p.value() - pb[p.key()]).abs().max().item<double>(), 1e-6) << p.key();
  }
}

// Per-step losses recorded by a callback.
struct LossRecorder : Callback {
  std::vector<double> values;
  void on_train_batch_end(int64_t, const Logs& logs) override { values.push_back(logs.at("loss")); }
};

}  // namespace

TEST(Resume, OneEpochPlusResumeEqualsTwoEpochs) {
  torchfit::testing::TempDir dir("resume");
  auto [x, y] = make_data();
  // Reference: 2 epochs in one run.
  auto ref = fresh_trainer();
  data::TensorIterator train_a(x, y, 8, true, 3), val_a(x, y, 8, true, 4);
  auto rec_a = std::make_shared<LossRecorder>();
  ref->fit(train_a, opts(2).validation_data(&val_a).callbacks({rec_a}));

  // 1 epoch, checkpoint, then a new process-like start: fresh trainer + fresh iterators + resume.
  auto first = fresh_trainer();
  data::TensorIterator train_b(x, y, 8, true, 3), val_b(x, y, 8, true, 4);
  auto rec_b = std::make_shared<LossRecorder>();
  first->fit(train_b, opts(1).validation_data(&val_b).callbacks({rec_b}));
  const std::string ckpt = (dir.path / "e1.ckpt").string();
  io::save_checkpoint(ckpt, *first);

  at::manual_seed(999);  // disturb the global RNG: the checkpoint must restore it
  auto resumed = fresh_trainer();
  auto info = io::load_checkpoint(ckpt, *resumed);
  EXPECT_EQ(info.position.epoch, 1);
  EXPECT_EQ(info.position.train_batches, 4);
  EXPECT_EQ(info.position.val_batches, 2);
  data::TensorIterator train_c(x, y, 8, true, 3), val_c(x, y, 8, true, 4);
  train_c.skip(info.position.train_batches);
  val_c.skip(info.position.val_batches);
  resumed->fit(train_c, opts(2).validation_data(&val_c).initial_epoch(info.position.epoch).callbacks({rec_b}));

  ASSERT_EQ(rec_a->values.size(), 8u);
  ASSERT_EQ(rec_b->values.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(rec_a->values[i], rec_b->values[i], 1e-6) << "step " << i;
  expect_same_weights(*ref, *resumed);
}

TEST(Resume, InterruptMidEpochThenResumeMatches) {
  torchfit::testing::TempDir dir("resume2");
  auto [x, y] = make_data();
  auto ref = fresh_trainer();
  data::TensorIterator train_a(x, y, 8, true, 3);
  auto rec_a = std::make_shared<LossRecorder>();
  ref->fit(train_a, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks({rec_a}));

  // Stop after step 3 of epoch 1 through the Ctrl-C path.
  struct StopAfter : Callback {
    int n;
    int seen = 0;
    explicit StopAfter(int k) : n(k) {}
    void on_train_batch_end(int64_t, const Logs&) override {
      if (++seen == n) runtime::request_interrupt();
    }
  };
  auto first = fresh_trainer();
  data::TensorIterator train_b(x, y, 8, true, 3);
  auto rec_b = std::make_shared<LossRecorder>();
  first->fit(train_b, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks(
                          {rec_b, std::make_shared<StopAfter>(3)}));
  runtime::clear_interrupt();
  EXPECT_TRUE(first->interrupted());
  EXPECT_EQ(first->position().epoch, 0);
  EXPECT_EQ(first->position().step, 3);
  EXPECT_EQ(rec_b->values.size(), 3u);
  const std::string ckpt = (dir.path / "mid.ckpt").string();
  io::save_checkpoint(ckpt, *first);

  auto resumed = fresh_trainer();
  auto info = io::load_checkpoint(ckpt, *resumed);
  data::TensorIterator train_c(x, y, 8, true, 3);
  train_c.skip(info.position.train_batches);
  resumed->fit(train_c, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).initial_epoch(info.position.epoch)
                            .initial_step(info.position.step).callbacks({rec_b}));
  ASSERT_EQ(rec_b->values.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(rec_a->values[i], rec_b->values[i], 1e-6) << "step " << i;
  expect_same_weights(*ref, *resumed);
}

// A checkpoint taken after an epoch's last step (--checkpoint-every) resumes by finishing that epoch
// (validation, callbacks) and going on with the next: the same weights and losses as one run.
TEST(Resume, CheckpointAfterTheLastStepOfAnEpochResumes) {
  torchfit::testing::TempDir dir("resume3");
  auto [x, y] = make_data();
  auto ref = fresh_trainer();
  data::TensorIterator train_a(x, y, 8, true, 3);
  auto rec_a = std::make_shared<LossRecorder>();
  ref->fit(train_a, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks({rec_a}));

  struct StopAfter : Callback {
    int seen = 0;
    void on_train_batch_end(int64_t, const Logs&) override {
      if (++seen == 4) runtime::request_interrupt();  // after the epoch's last step, before its end
    }
  };
  auto first = fresh_trainer();
  data::TensorIterator train_b(x, y, 8, true, 3);
  auto rec_b = std::make_shared<LossRecorder>();
  first->fit(train_b, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks({rec_b, std::make_shared<StopAfter>()}));
  runtime::clear_interrupt();
  ASSERT_EQ(first->position().epoch, 0);
  ASSERT_EQ(first->position().step, 4);
  const std::string ckpt = (dir.path / "last.ckpt").string();
  io::save_checkpoint(ckpt, *first);

  auto resumed = fresh_trainer();
  auto info = io::load_checkpoint(ckpt, *resumed);
  data::TensorIterator train_c(x, y, 8, true, 3);
  train_c.skip(info.position.train_batches);
  History h = resumed->fit(train_c, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).initial_epoch(info.position.epoch)
                                        .initial_step(info.position.step).callbacks({rec_b}));
  ASSERT_EQ(rec_b->values.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(rec_a->values[i], rec_b->values[i], 1e-6) << "step " << i;
  expect_same_weights(*ref, *resumed);
  ASSERT_EQ(h.epoch, (std::vector<int>{0, 1}));
  EXPECT_TRUE(std::isnan(h.history.at("loss")[0])) << "no step of epoch 1 ran after the resume";
  EXPECT_FALSE(std::isnan(h.history.at("loss")[1]));
  EXPECT_THROW(resumed->fit(train_c, FitOptions().epochs(1).steps_per_epoch(4).verbose(0).initial_step(5)), ConfigError);
}
