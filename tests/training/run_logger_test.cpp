// RunLogger: the three run files, their status through a run, update(), and unwritable folders.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "support/tmpfs.h"

using namespace torchfit;
namespace fs = std::filesystem;

namespace {
nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}
int count_lines(const fs::path& p) {
  std::ifstream f(p);
  int n = 0;
  for (std::string l; std::getline(f, l);) ++n;
  return n;
}
}  // namespace

TEST(RunLogger, WritesRowsAndFinalStatusAndMergesUpdates) {
  torchfit::testing::TempDir dir("runlogger");
  at::manual_seed(1);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions().metrics({"accuracy"}));
  data::TensorIterator it(at::rand({10, 4}), at::one_hot(at::arange(10) % 3, 3).to(at::kFloat), 4);
  auto logger = std::make_shared<RunLogger>(RunLoggerOptions((dir.path / "run").string()).run_info({{"flag", 7}}));
  t.fit(it, FitOptions().epochs(2).verbose(0).warmup_steps(1).callbacks({logger}));
  EXPECT_EQ(count_lines(dir.path / "run" / "steps.csv"), 7);
  EXPECT_EQ(count_lines(dir.path / "run" / "epochs.csv"), 3);
  std::ifstream steps(dir.path / "run" / "steps.csv");
  std::string header;
  std::getline(steps, header);
  EXPECT_EQ(header, "epoch,step,data_ms,h2d_ms,compute_ms,step_ms,loss,accuracy");
  auto j = read_json(dir.path / "run" / "run.json");
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["arguments"]["flag"], 7);
  EXPECT_EQ(j["parameters"], 67);
  EXPECT_EQ(j["epoch_summaries"].size(), 2u);
  EXPECT_EQ(j["warmup"].size(), 1u);
  EXPECT_EQ(j["position"]["train_batches"], 6);
  logger->update({{"achieved_gflops_per_s", 1.5}});
  j = read_json(dir.path / "run" / "run.json");
  EXPECT_EQ(j["achieved_gflops_per_s"], 1.5);
  EXPECT_EQ(j["status"], "completed");
}

TEST(RunLogger, AFailedRunIsRecordedAndAnUnwritableFolderFailsBeforeTheFirstStep) {
  torchfit::testing::TempDir dir("runlogger2");
  at::manual_seed(1);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions());
  auto y = at::one_hot(at::arange(10) % 3, 3).to(at::kFloat);
  data::TensorIterator bad(at::full({10, 4}, std::numeric_limits<float>::quiet_NaN()), y, 4);
  const fs::path run = dir.path / "run";
  EXPECT_THROW(
      t.fit(bad, FitOptions().verbose(0).callbacks({std::make_shared<RunLogger>(RunLoggerOptions(run.string()))})),
      Error);
  const auto j = read_json(run / "run.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_NE(j["error"].get<std::string>().find("non-finite loss"), std::string::npos);

  std::ofstream(dir.path / "file") << "x";
  data::TensorIterator good(at::rand({10, 4}), y, 4);
  EXPECT_THROW(t.fit(good, FitOptions().verbose(0).callbacks(
                               {std::make_shared<RunLogger>(RunLoggerOptions((dir.path / "file" / "run").string()))})),
               IoError);
  EXPECT_TRUE(t.step_timings().empty()) << "no step ran";
  EXPECT_THROW(RunLogger(RunLoggerOptions("")), ConfigError);
}

namespace {
// Fills the small file system after the second step, so that RunLogger's later rows find it full.
struct FillDiskAfterStep2 : Callback {
  const torchfit::testing::SmallFilesystem* fs = nullptr;
  void on_train_batch_end(int64_t batch, const Logs&) override {
    if (batch == 1) fs->fill();
  }
};
}  // namespace

TEST(RunLogger, AFullDiskMidRunStopsFitWithAnIoErrorNamingStepsCsvAndTheOsReason) {
  torchfit::testing::SmallFilesystem fs("64k");
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  at::manual_seed(1);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions());
  // 1-sample batches: a steps.csv row per step, far more rows than the file's last page holds.
  data::TensorIterator it(at::rand({400, 4}), at::one_hot(at::arange(400) % 3, 3).to(at::kFloat), 1);
  auto fill = std::make_shared<FillDiskAfterStep2>();
  fill->fs = &fs;
  auto logger = std::make_shared<RunLogger>(RunLoggerOptions((fs.path() / "run").string()));
  std::string message;
  try {
    t.fit(it, FitOptions().epochs(1).verbose(0).callbacks({fill, logger}));
  } catch (const IoError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "cannot write '" + (fs.path() / "run" / "steps.csv").string() + "': " + std::strerror(ENOSPC));
  EXPECT_LT(t.position().train_batches, 400) << "fit stopped at the failed row";
}

namespace {
std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}
// The loss column (2nd) of epochs.csv.
std::vector<std::string> epoch_losses(const fs::path& p) {
  std::vector<std::string> out;
  for (const auto& l : lines_of(p))
    out.push_back(l.substr(l.find(',') + 1, l.find(',', l.find(',') + 1) - l.find(',') - 1));
  return out;
}
// Fits the tiny MLP (seed 5) on 10 fixed samples for `epochs`, with `callbacks`, from `resume` if given.
void fit_tiny(int epochs, std::vector<CallbackPtr> callbacks, const std::string& resume = "") {
  at::manual_seed(5);
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions().metrics({"accuracy"}));
  const at::Tensor x = at::linspace(0, 1, 40).view({10, 4});
  data::TensorIterator it(x, at::one_hot(at::arange(10) % 3, 3).to(at::kFloat), 4, /*shuffle=*/true, /*seed=*/3);
  t.fit(it, FitOptions().epochs(epochs).verbose(0).callbacks(callbacks).resume_from(resume));
}
}  // namespace

// Issue 26 (item 5): as Keras's CSVLogger(append=True) / BackupAndRestore, a resumed run continues its own
// run files: the rows up to the checkpoint stay, rows written after it are dropped and redone, and run.json
// records each part. The continued epochs.csv holds the losses an uninterrupted run has.
TEST(RunLogger, AResumedRunContinuesItsFilesAndRecordsEachPart) {
  torchfit::testing::TempDir dir("runlogger_resume");
  const fs::path run = dir.path / "run", whole = dir.path / "whole";
  fit_tiny(3, {std::make_shared<RunLogger>(RunLoggerOptions(whole.string()))});
  // Part 1: two epochs, checkpoints m1.ckpt and m2.ckpt; resuming from m1 redoes epoch 2.
  fit_tiny(2, {std::make_shared<RunLogger>(RunLoggerOptions(run.string())),
               std::make_shared<ModelCheckpoint>(ModelCheckpointOptions((run / "m{epoch}.ckpt").string()))});
  const auto part1_steps = lines_of(run / "steps.csv");
  ASSERT_EQ(part1_steps.size(), 7u);
  fit_tiny(3, {std::make_shared<RunLogger>(RunLoggerOptions(run.string()).append(true))}, (run / "m1.ckpt").string());
  const auto steps = lines_of(run / "steps.csv");
  ASSERT_EQ(steps.size(), 10u) << "header + 3 epochs of 3 steps, epoch 2 not twice";
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(steps[i], part1_steps[i]) << "row " << i << " of part 1 kept as it was";
  EXPECT_EQ(steps[4].substr(0, 4), "2,1,");
  const auto continued = epoch_losses(run / "epochs.csv"), uninterrupted = epoch_losses(whole / "epochs.csv");
  ASSERT_EQ(continued.size(), 4u);
  ASSERT_EQ(uninterrupted.size(), 4u);
  for (size_t i = 1; i < 4; ++i)  // 6 significant digits in the file
    EXPECT_NEAR(std::stod(continued[i]), std::stod(uninterrupted[i]), 1e-5 * std::fabs(std::stod(uninterrupted[i])))
        << "epoch " << i << ": 1 + resume = 3 epochs";
  const auto j = read_json(run / "run.json");
  ASSERT_EQ(j["parts"].size(), 2u) << j["parts"].dump();
  EXPECT_EQ(j["parts"][0]["status"], "completed");
  EXPECT_EQ(j["parts"][1]["initial_epoch"], 1);
  EXPECT_EQ(j["parts"][1]["status"], "completed");
  EXPECT_EQ(j["epoch_summaries"].size(), 3u);
  // Without append (or resuming into another folder) the files start fresh.
  fit_tiny(3, {std::make_shared<RunLogger>(RunLoggerOptions((dir.path / "other").string()).append(true))},
           (run / "m1.ckpt").string());
  EXPECT_EQ(count_lines(dir.path / "other" / "epochs.csv"), 3);
  EXPECT_EQ(read_json(dir.path / "other" / "run.json")["parts"].size(), 1u);
}

namespace {
// Starts a second fit() with a RunLogger on the same folder while the first one runs.
struct SecondRun : Callback {
  std::string folder, error;
  explicit SecondRun(std::string f) : folder(std::move(f)) {}
  void on_train_batch_end(int64_t batch, const Logs&) override {
    if (batch != 0) return;
    try {
      fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(folder))});
    } catch (const IoError& e) {
      error = e.what();
    }
  }
};
}  // namespace

// Issue 26 (item 2): a run never writes into another live run's folder.
TEST(RunLogger, ASecondRunIntoALiveRunsFolderIsRefusedNamingIt) {
  torchfit::testing::TempDir dir("runlogger_lock");
  const std::string folder = (dir.path / "run").string();
  auto second = std::make_shared<SecondRun>(folder);
  fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(folder)), second});
  EXPECT_NE(second->error.find("run folder '" + folder + "' is in use by another running process (pid " +
                               std::to_string(::getpid()) + ")"),
            std::string::npos)
      << second->error;
  EXPECT_EQ(count_lines(dir.path / "run" / "steps.csv"), 4) << "the live run's rows are its own";
  fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(folder))});  // free again once the run ended
}

namespace {
// A second run into its own folder whose checkpoint goes into the live run's folder.
struct SecondRunCheckpointingInto : Callback {
  std::string own, into, error, probe_error, prepare_error;
  SecondRunCheckpointingInto(std::string o, std::string i) : own(std::move(o)), into(std::move(i)) {}
  void on_train_batch_end(int64_t batch, const Logs&) override {
    if (batch != 0) return;
    try {
      RunLogger::check_not_in_use(into);
    } catch (const IoError& e) {
      probe_error = e.what();
    }
    try {
      RunLoggerOptions(own).also_lock({into}).prepare();
    } catch (const IoError& e) {
      prepare_error = e.what();
    }
    try {
      fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(own).also_lock({into}))});
    } catch (const IoError& e) {
      error = e.what();
    }
  }
};
}  // namespace

// The lock covers the other folders a run writes into (its checkpoint's), and can be asked up front.
TEST(RunLogger, AnotherFolderIntoALiveRunsFolderIsRefusedToo) {
  torchfit::testing::TempDir dir("runlogger_lock_also");
  const std::string live = (dir.path / "live").string(), own = (dir.path / "own").string();
  auto second = std::make_shared<SecondRunCheckpointingInto>(own, live);
  fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(live)), second});
  EXPECT_NE(second->error.find("run folder '" + live + "' is in use by another running process"), std::string::npos)
      << second->error;
  EXPECT_NE(second->probe_error.find("run folder '" + live + "' is in use"), std::string::npos) << second->probe_error;
  EXPECT_NE(second->prepare_error.find("run folder '" + live + "' is in use"), std::string::npos)
      << second->prepare_error;
  EXPECT_FALSE(std::filesystem::exists(dir.path / "own" / "steps.csv")) << "refused before writing";
  EXPECT_NO_THROW(RunLogger::check_not_in_use(live));  // free once the run ended
  fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(own).also_lock({live}))});
}

// Issue 37 (item 9): the lock files of the run folder and of another folder it locks are there while the
// run lives and gone when it ends: through the destructor, and through exit() (which skips destructors).
class LockFilesSeen : public Callback {
 public:
  explicit LockFilesSeen(std::vector<fs::path> dirs) : dirs_(std::move(dirs)) {}
  void on_train_batch_end(int64_t, const Logs&) override {
    for (const auto& d : dirs_) seen = seen && fs::exists(d / ".torchfit.lock");
  }
  bool seen = true;

 private:
  std::vector<fs::path> dirs_;
};

TEST(RunLogger, TheLockFilesGoWhenTheRunEnds) {
  torchfit::testing::TempDir dir("runlogger_lock_gone");
  const fs::path run = dir.path / "run", other = dir.path / "ckpt";
  auto seen = std::make_shared<LockFilesSeen>(std::vector<fs::path>{run, other});
  fit_tiny(1, {std::make_shared<RunLogger>(RunLoggerOptions(run.string()).also_lock({other.string()})), seen});
  EXPECT_TRUE(seen->seen) << "no lock file while the run lived";
  EXPECT_FALSE(fs::exists(run / ".torchfit.lock"));
  EXPECT_FALSE(fs::exists(other / ".torchfit.lock"));
  // A lock file a killed run left is taken over, and removed at the end too.
  std::ofstream(run / ".torchfit.lock") << "999999";
  EXPECT_NO_THROW(RunLogger::check_not_in_use(run.string()));
  EXPECT_FALSE(fs::exists(run / ".torchfit.lock")) << "a free, stale lock file stays";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        runtime::install_exit_cleanup();
        auto logger = new RunLogger(RunLoggerOptions(run.string()).also_lock({other.string()}));
        Trainer t(torchfit::testing::tiny_mlp(), CompileOptions());
        data::TensorIterator it(at::rand({4, 4}), at::one_hot(at::arange(4) % 3, 3).to(at::kFloat), 4);
        struct ExitMidRun : Callback {
          void on_train_batch_end(int64_t, const Logs&) override { std::exit(4); }
        };
        t.fit(it, FitOptions().epochs(1).verbose(0).callbacks({CallbackPtr(logger), std::make_shared<ExitMidRun>()}));
      },
      ::testing::ExitedWithCode(4), "");
  EXPECT_FALSE(fs::exists(run / ".torchfit.lock")) << "exit()";
  EXPECT_FALSE(fs::exists(other / ".torchfit.lock")) << "exit()";
}

// Issue 26 (item 10): a loss of exactly zero is written "0", never "-0" (the crossentropy of a certain,
// right prediction is −(1·0) = −0 in IEEE arithmetic; Keras writes 0.0).
TEST(RunLogger, ALossOfZeroIsWrittenWithoutASign) {
  torchfit::testing::TempDir dir("runlogger_zero");
  Sequential m;
  m->add(Dense(DenseOptions(2).activation("softmax").input_shape(Shape{4})));
  {
    at::NoGradGuard no_grad;
    for (auto& p : m->named_parameters()) p.value().zero_();
    m->named_parameters()["dense.bias"].copy_(at::tensor({1000.f, 0.f}));  // logits (1000, 0): p = (1, 0)
  }
  Trainer t(m, CompileOptions().loss("categorical_crossentropy"));
  const at::Tensor y = at::tensor({1.f, 0.f}).repeat({8, 1});
  data::TensorIterator it(at::rand({8, 4}), y, 4);
  t.fit(it, FitOptions().epochs(1).verbose(0).callbacks({std::make_shared<RunLogger>(RunLoggerOptions(dir.str()))}));
  const auto steps = lines_of(dir.path / "steps.csv");
  ASSERT_EQ(steps.size(), 3u);
  for (size_t i = 1; i < steps.size(); ++i) EXPECT_EQ(steps[i].substr(steps[i].rfind(',') + 1), "0") << steps[i];
  const auto epochs = lines_of(dir.path / "epochs.csv");
  EXPECT_EQ(epoch_losses(dir.path / "epochs.csv")[1], "0") << epochs[1];
}
