// RunLogger: the three run files, their status through a run, update(), and unwritable folders.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>
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
  EXPECT_THROW(t.fit(bad, FitOptions().verbose(0).run_dir(run.string())), Error);
  const auto j = read_json(run / "run.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_NE(j["error"].get<std::string>().find("non-finite loss"), std::string::npos);

  std::ofstream(dir.path / "file") << "x";
  data::TensorIterator good(at::rand({10, 4}), y, 4);
  EXPECT_THROW(t.fit(good, FitOptions().verbose(0).run_dir((dir.path / "file" / "run").string())), IoError);
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
