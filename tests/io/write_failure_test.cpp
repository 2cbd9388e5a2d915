// Writes that fail mid-run (a real, full tmpfs): a clear IoError naming the file and the OS reason, no
// temporary left, the earlier file intact, run.json "failed" — never an abort. Non-finite weights are
// never checkpointed.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "support/tmpfs.h"

using namespace torchfit;
using torchfit::testing::SmallFilesystem;
using torchfit::testing::TempDir;

namespace {

constexpr const char* kSmallFs = "64k";

int entries_in(const std::filesystem::path& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void expect_no_space_error(const IoError& e, const std::string& path) {
  const std::string what = e.what();
  EXPECT_NE(what.find("'" + path + "'"), std::string::npos) << what;
  EXPECT_NE(what.find(std::strerror(ENOSPC)), std::string::npos) << what;
}

// A model whose checkpoint (~130 KB of weights) does not fit the small file system.
Sequential big_mlp() { return torchfit::testing::tiny_mlp(4096, 3); }

// Sets every weight to nan at the end of batch `at` (a step that diverged).
struct PoisonWeights : Callback {
  int64_t at;
  explicit PoisonWeights(int64_t batch) : at(batch) {}
  void on_train_batch_end(int64_t batch, const Logs&) override {
    if (batch != at) return;
    torch::NoGradGuard no_grad;
    for (auto& p : trainer().model()->parameters()) p.fill_(std::nan(""));
  }
};

}  // namespace

TEST(WriteFailure, FullDiskIsAnErrorNamingFileAndReasonAndKeepsTheOldFile) {
  SmallFilesystem fs(kSmallFs);
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  const std::string path = fs.file("notes.txt");
  io::write_text_atomically(path, "old");
  try {
    io::write_text_atomically(path, std::string(1 << 20, 'x'));
    FAIL() << "no error";
  } catch (const IoError& e) {
    expect_no_space_error(e, path);
  }
  EXPECT_EQ(read_text(path), "old");
  EXPECT_EQ(entries_in(fs.path()), 1) << "the temporary file was left behind";
}

TEST(WriteFailure, CheckpointOnAFullDiskIsAnIoErrorNotAnAbort) {
  SmallFilesystem fs(kSmallFs);
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  at::manual_seed(1);
  Sequential model = big_mlp();
  const std::string path = fs.file("m.ckpt");
  try {
    saving::save_checkpoint(path, saving::TrainingState{model, nullptr, CompileOptions(), {}, {}, nullptr});
    FAIL() << "no error";
  } catch (const IoError& e) {
    expect_no_space_error(e, path);
  }
  EXPECT_EQ(entries_in(fs.path()), 0) << "the temporary file was left behind";
}

TEST(WriteFailure, FitWithACheckpointOnAFullDiskFailsAndRunJsonSaysSo) {
  SmallFilesystem fs(kSmallFs);
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  TempDir run("write_failure_run");
  at::manual_seed(2);
  Trainer trainer(big_mlp(), CompileOptions());
  data::TensorIterator train(at::rand({8, 4096}), at::one_hot(at::arange(8) % 3, 3).to(at::kFloat), 4);
  const std::string ckpt = fs.file("m.ckpt");
  auto checkpoint = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(ckpt));
  EXPECT_THROW(trainer.fit(train, FitOptions().epochs(2).verbose(0).callbacks(
                                      {std::make_shared<RunLogger>(RunLoggerOptions(run.str())), checkpoint})),
               IoError);
  EXPECT_EQ(trainer.position().epoch, 1) << "the error comes at the first epoch's checkpoint";
  const auto run_json = nlohmann::json::parse(read_text(run.file("run.json")));
  EXPECT_EQ(run_json["status"], "failed");
  EXPECT_NE(run_json["error"].get<std::string>().find(ckpt), std::string::npos) << run_json["error"];
  EXPECT_EQ(entries_in(fs.path()), 0);
}

TEST(NonFiniteWeights, SaveCheckpointRefusesThemAndWritesNothing) {
  TempDir dir("nonfinite");
  Sequential model = torchfit::testing::tiny_mlp();
  {
    torch::NoGradGuard no_grad;
    model->parameters()[1][0] = std::numeric_limits<float>::infinity();
  }
  const std::string path = dir.file("m.ckpt");
  try {
    saving::save_checkpoint(path, saving::TrainingState{model, nullptr, CompileOptions(), {}, {}, nullptr});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(NonFiniteWeights, ModelCheckpointKeepsTheLastFiniteCheckpoint) {
  TempDir dir("nonfinite_fit");
  at::manual_seed(3);
  Trainer trainer(torchfit::testing::tiny_mlp(), CompileOptions());
  data::TensorIterator train(at::rand({16, 4}), at::one_hot(at::arange(16) % 3, 3).to(at::kFloat), 4);
  const std::string path = dir.file("m.ckpt");
  auto checkpoint = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(path).save_freq(1));
  // Step 1 saves finite weights; after step 2 the weights are nan: not saved; step 3's loss is nan.
  EXPECT_THROW(
      trainer.fit(train, FitOptions().epochs(1).verbose(0).callbacks({std::make_shared<PoisonWeights>(1), checkpoint})),
      Error);
  EXPECT_EQ(checkpoint->last_saved(), path);
  const saving::CheckpointInfo info = saving::read_checkpoint_info(path);
  EXPECT_EQ(info.position.step, 1);
  Model loaded = saving::load_model(path);
  for (const auto& p : loaded->parameters()) EXPECT_TRUE(torch::isfinite(p).all().item<bool>());
}
