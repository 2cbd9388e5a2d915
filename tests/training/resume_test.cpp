// Resume: 2 epochs in one run equal 1 epoch + checkpoint + resume for 1 epoch (same per-step losses and
// final weights), also from the middle of an epoch; Ctrl-C (request_interrupt) stops after the step.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/trainer.h>

#include <fstream>

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

FitOptions opts(int epochs) { return FitOptions().epochs(epochs).steps_per_epoch(4).validation_steps(2).verbose(0); }

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
  void on_train_batch_end(int64_t, const Logs& logs) override { values.push_back(logs.at("batch_loss")); }
};

// Ctrl-C (request_interrupt) after the n-th step of the run.
struct StopAfter : Callback {
  int n;
  int seen = 0;
  explicit StopAfter(int k) : n(k) {}
  void on_train_batch_end(int64_t, const Logs&) override {
    if (++seen == n) runtime::request_interrupt();
  }
};

// The uninterrupted reference: 2 epochs of 4 steps on `train`, its per-step losses in `losses`.
std::unique_ptr<Trainer> two_epochs(data::TensorIterator& train, std::shared_ptr<LossRecorder>& losses) {
  auto ref = fresh_trainer();
  losses = std::make_shared<LossRecorder>();
  ref->fit(train, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks({losses}));
  return ref;
}

// A fresh trainer's 2 × 4 steps on `train`, stopped through the Ctrl-C path after the n-th step (callbacks:
// the loss recorder made here, then `extra`).
std::unique_ptr<Trainer> interrupted_after(int n, data::TensorIterator& train, std::shared_ptr<LossRecorder>& losses,
                                           std::vector<CallbackPtr> extra = {}) {
  auto first = fresh_trainer();
  losses = std::make_shared<LossRecorder>();
  extra.insert(extra.begin(), losses);
  extra.push_back(std::make_shared<StopAfter>(n));
  first->fit(train, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks(extra));
  runtime::clear_interrupt();
  return first;
}

// The resumed run reproduces the reference: the same 8 per-step losses and the same final weights.
void expect_same_run(const LossRecorder& ref_losses, Trainer& ref, const LossRecorder& losses, Trainer& resumed) {
  ASSERT_EQ(losses.values.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(ref_losses.values[i], losses.values[i], 1e-6) << "step " << i;
  expect_same_weights(ref, resumed);
}

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
  first->save_checkpoint(ckpt);

  at::manual_seed(999);  // disturb the global RNG: the checkpoint must restore it
  auto resumed = fresh_trainer();
  const auto info = saving::read_checkpoint_info(ckpt);
  EXPECT_EQ(info.position.epoch, 1);
  EXPECT_EQ(info.position.train_batches, 4);
  EXPECT_EQ(info.position.val_batches, 2);
  // Fresh iterators: resume_from loads the checkpoint and skips the batches the first run took.
  data::TensorIterator train_c(x, y, 8, true, 3), val_c(x, y, 8, true, 4);
  History h = resumed->fit(train_c, opts(2).validation_data(&val_c).resume_from(ckpt).callbacks({rec_b}));
  EXPECT_EQ(h.epoch, (std::vector<int>{1}));
  EXPECT_EQ(resumed->position().train_batches, 8);

  ASSERT_EQ(rec_a->values.size(), 8u);
  expect_same_run(*rec_a, *ref, *rec_b, *resumed);
}

TEST(Resume, InterruptMidEpochThenResumeMatches) {
  torchfit::testing::TempDir dir("resume2");
  auto [x, y] = make_data();
  data::TensorIterator train_a(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_a;
  auto ref = two_epochs(train_a, rec_a);

  // Stop after step 3 of epoch 1 through the Ctrl-C path.
  data::TensorIterator train_b(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_b;
  auto first = interrupted_after(3, train_b, rec_b);
  EXPECT_TRUE(first->interrupted());
  EXPECT_EQ(first->position().epoch, 0);
  EXPECT_EQ(first->position().step, 3);
  EXPECT_EQ(rec_b->values.size(), 3u);
  const std::string ckpt = (dir.path / "mid.ckpt").string();
  first->save_checkpoint(ckpt);

  auto resumed = fresh_trainer();
  data::TensorIterator train_c(x, y, 8, true, 3);
  resumed->fit(train_c, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt).callbacks({rec_b}));
  expect_same_run(*rec_a, *ref, *rec_b, *resumed);
}

// Ctrl-C: ModelCheckpoint writes the checkpoint at the step reached (the app only reports it); resuming
// from it, read once (resume_checkpoint, as train_cnn --resume), continues as one uninterrupted run.
TEST(Resume, ModelCheckpointWritesTheInterruptCheckpointAndOneReadResumesIt) {
  torchfit::testing::TempDir dir("resume_interrupt");
  auto [x, y] = make_data();
  data::TensorIterator train_a(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_a;
  auto ref = two_epochs(train_a, rec_a);

  const std::string ckpt = (dir.path / "model.ckpt").string();
  auto checkpoint = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(ckpt));
  data::TensorIterator train_b(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_b;
  auto first = interrupted_after(6, train_b, rec_b, {checkpoint});
  ASSERT_TRUE(first->interrupted());
  EXPECT_TRUE(checkpoint->saved_on_interrupt());
  EXPECT_EQ(checkpoint->last_saved(), ckpt);
  const auto read = saving::Checkpoint::read(ckpt);
  EXPECT_EQ(read->info().position.epoch, 1);
  EXPECT_EQ(read->info().position.step, 2);

  auto resumed = fresh_trainer();
  data::TensorIterator train_c(x, y, 8, true, 3);
  EXPECT_THROW(
      resumed->fit(train_c,
                   FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt).resume_checkpoint(read)),
      ConfigError);
  resumed->fit(train_c,
               FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_checkpoint(read).callbacks({rec_b}));
  expect_same_run(*rec_a, *ref, *rec_b, *resumed);
}

// A checkpoint taken after an epoch's last step (--checkpoint-every) resumes by finishing that epoch
// (validation, callbacks) and going on with the next: the same weights and losses as one run.
TEST(Resume, CheckpointAfterTheLastStepOfAnEpochResumes) {
  torchfit::testing::TempDir dir("resume3");
  auto [x, y] = make_data();
  data::TensorIterator train_a(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_a;
  auto ref = two_epochs(train_a, rec_a);

  data::TensorIterator train_b(x, y, 8, true, 3);
  std::shared_ptr<LossRecorder> rec_b;
  auto first = interrupted_after(4, train_b, rec_b);  // after the epoch's last step, before its end
  ASSERT_EQ(first->position().epoch, 0);
  ASSERT_EQ(first->position().step, 4);
  const std::string ckpt = (dir.path / "last.ckpt").string();
  first->save_checkpoint(ckpt);

  auto resumed = fresh_trainer();
  data::TensorIterator train_c(x, y, 8, true, 3);
  History h =
      resumed->fit(train_c, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt).callbacks({rec_b}));
  expect_same_run(*rec_a, *ref, *rec_b, *resumed);
  ASSERT_EQ(h.epoch, (std::vector<int>{0, 1}));
  EXPECT_TRUE(std::isnan(h.history.at("loss")[0])) << "no step of epoch 1 ran after the resume";
  EXPECT_FALSE(std::isnan(h.history.at("loss")[1]));
  EXPECT_THROW(resumed->fit(train_c, FitOptions().epochs(1).steps_per_epoch(4).verbose(0).initial_step(5)),
               ConfigError);
}

// The low-level path resume_from uses: load_checkpoint, skip, initial_epoch/initial_step by hand.
TEST(Resume, LoadCheckpointSkipAndInitialStepByHandMatchResumeFrom) {
  torchfit::testing::TempDir dir("resume4");
  auto [x, y] = make_data();
  auto first = fresh_trainer();
  data::TensorIterator train_a(x, y, 8, true, 3);
  first->fit(train_a, FitOptions().epochs(1).steps_per_epoch(3).verbose(0));
  const std::string ckpt = (dir.path / "e1.ckpt").string();
  first->save_checkpoint(ckpt);

  auto by_hand = fresh_trainer();
  const auto info = by_hand->load_checkpoint(ckpt);
  data::TensorIterator train_b(x, y, 8, true, 3);
  train_b.skip(info.position.train_batches);
  by_hand->fit(train_b, FitOptions().epochs(2).steps_per_epoch(3).verbose(0).initial_epoch(info.position.epoch));

  auto library = fresh_trainer();
  data::TensorIterator train_c(x, y, 8, true, 3);
  library->fit(train_c, FitOptions().epochs(2).steps_per_epoch(3).verbose(0).resume_from(ckpt));
  expect_same_weights(*by_hand, *library);
}

TEST(Resume, BadCheckpointsAreErrorsNamingTheFile) {
  torchfit::testing::TempDir dir("resume5");
  auto [x, y] = make_data();
  auto t = fresh_trainer();
  data::TensorIterator train(x, y, 8, true, 3);
  const std::string missing = (dir.path / "missing.ckpt").string();
  try {
    t->fit(train, FitOptions().epochs(1).verbose(0).resume_from(missing));
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.ckpt"), std::string::npos) << e.what();
  }
  // A checkpoint taken at step 4 cannot continue an epoch of 3 steps.
  data::TensorIterator train_a(x, y, 8, true, 3);
  t->fit(train_a, FitOptions().epochs(2).steps_per_epoch(4).verbose(0));
  const std::string ckpt = (dir.path / "e2.ckpt").string();
  t->set_position({1, 4, 8, 0});
  t->save_checkpoint(ckpt);
  data::TensorIterator train_b(x, y, 8, true, 3);
  try {
    fresh_trainer()->fit(train_b, FitOptions().epochs(3).steps_per_epoch(3).verbose(0).resume_from(ckpt));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("beyond steps_per_epoch 3"), std::string::npos) << e.what();
  }
  // The saved position counts batches: another batch size would continue elsewhere in the data.
  t->set_position({1, 0, 8, 0, 8});
  t->save_checkpoint(ckpt);
  data::TensorIterator batches_of_4(x, y, 4, true, 3);
  try {
    fresh_trainer()->fit(batches_of_4, FitOptions().epochs(3).steps_per_epoch(4).verbose(0).resume_from(ckpt));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("batch size 8"), std::string::npos) << e.what();
  }
  EXPECT_EQ(saving::read_checkpoint_info(ckpt).position.batch_size, 8);
}

TEST(Resume, FitOptionsOutOfRangeAreErrorsBeforeAnyStep) {
  auto [x, y] = make_data();
  auto t = fresh_trainer();
  data::TensorIterator train(x, y, 8);
  EXPECT_THROW(t->fit(train, FitOptions().verbose(7)), ConfigError);
  EXPECT_THROW(t->fit(train, FitOptions().verbose(0).validation_data(&train).validation_steps(-1)), ConfigError);
  EXPECT_TRUE(t->step_timings().empty());
}

TEST(Resume, ChangedStreamSettingsAreRefusedWithTheDifference) {
  torchfit::testing::TempDir dir("resume_stream");
  auto [x, y] = make_data();
  auto t = fresh_trainer();
  data::TensorIterator train(x, y, 8, true, 3);
  t->fit(train, FitOptions().epochs(1).steps_per_epoch(4).verbose(0));
  const std::string ckpt = dir.file("s.ckpt");
  t->save_checkpoint(ckpt);
  EXPECT_EQ(saving::read_checkpoint_info(ckpt).position.data.at("seed"), "3");
  data::TensorIterator other_seed(x, y, 8, true, 7);
  try {
    fresh_trainer()->fit(other_seed, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("seed 3 → 7"), std::string::npos) << e.what();
  }
  data::TensorIterator fewer(x.slice(0, 0, 32), y.slice(0, 0, 32), 8, true, 3);
  try {
    fresh_trainer()->fit(fewer, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("samples 40 → 32"), std::string::npos) << e.what();
  }
}

TEST(Resume, AnExplicitLearningRateReplacesTheSavedOne) {
  torchfit::testing::TempDir dir("resume_lr");
  auto [x, y] = make_data();
  auto t = fresh_trainer();
  data::TensorIterator train(x, y, 8, true, 3);
  t->fit(train, FitOptions().epochs(1).steps_per_epoch(4).verbose(0));
  const std::string ckpt = dir.file("lr.ckpt");
  t->save_checkpoint(ckpt);
  auto kept = fresh_trainer();
  kept->set_learning_rate(0.25);  // the saved rate (0.001) wins without resume_learning_rate
  data::TensorIterator train_b(x, y, 8, true, 3);
  kept->fit(train_b, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt));
  EXPECT_DOUBLE_EQ(kept->learning_rate(), 0.001);
  auto replaced = fresh_trainer();
  data::TensorIterator train_c(x, y, 8, true, 3);
  replaced->fit(train_c,
                FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt).resume_learning_rate(0.5));
  EXPECT_DOUBLE_EQ(replaced->learning_rate(), 0.5);
}

TEST(Resume, PositionCountsTheSamplesActuallyTaken) {
  auto [x, y] = make_data();
  auto t = fresh_trainer();
  data::TensorIterator train(x, y, 16, true, 3);  // 40 samples: batches of 16, 16, 8
  t->fit(train, FitOptions().epochs(1).verbose(0));
  EXPECT_EQ(t->position().train_batches, 3);
  EXPECT_EQ(t->position().train_samples, 40);
}

// A functional model (apps/train_cnn/branches_cnn.json: Concatenate + Add + BatchNormalization +
// GlobalAveragePooling2D) resumes exactly, the resumed run's model rebuilt from the checkpoint's JSON.
TEST(Resume, FunctionalModelFromJsonResumesExactly) {
  torchfit::testing::TempDir dir("resume_functional");
  std::ifstream f(std::string(TORCHFIT_SOURCE_DIR) + "/apps/train_cnn/branches_cnn.json");
  ASSERT_TRUE(f);
  auto json = nlohmann::json::parse(f);
  json["config"]["layers"][0]["config"]["batch_input_shape"] = {nullptr, 16, 16, 3};
  json["config"]["layers"].back()["config"]["units"] = 3;
  auto make = [&] {
    at::manual_seed(11);
    return std::make_unique<Trainer>(model_from_json(json), CompileOptions().metrics({"accuracy"}));
  };
  auto [x, y] = make_data();
  auto ref = make();
  auto rec_ref = std::make_shared<LossRecorder>();
  data::TensorIterator train_r(x, y, 8, true, 3);
  ref->fit(train_r, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).callbacks({rec_ref}));

  auto first = make();
  auto rec = std::make_shared<LossRecorder>();
  data::TensorIterator train_b(x, y, 8, true, 3);
  first->fit(train_b, FitOptions().epochs(1).steps_per_epoch(4).verbose(0).callbacks({rec}));
  const std::string ckpt = (dir.path / "e1.ckpt").string();
  first->save_checkpoint(ckpt);

  at::manual_seed(999);
  Model loaded = saving::load_model(ckpt);
  EXPECT_FALSE(loaded->is_chain());
  EXPECT_EQ(loaded->get_layer("concat")->class_name(), "Concatenate");
  Trainer resumed(loaded, CompileOptions().metrics({"accuracy"}));
  data::TensorIterator train_c(x, y, 8, true, 3);
  resumed.fit(train_c, FitOptions().epochs(2).steps_per_epoch(4).verbose(0).resume_from(ckpt).callbacks({rec}));
  expect_same_run(*rec_ref, *ref, *rec, resumed);
}
