// RunLoggerOptions' run-folder policy: automatic names and the run a resume continues.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include <torchfit/training/run_logger.h>

#include "support/temp_dir.h"

using namespace torchfit;
namespace fs = std::filesystem;

TEST(RunFolder, AutomaticNamesAreTimeAndTagAndNeverShared) {
  torchfit::testing::TempDir dir("runfolder");
  const std::string root = dir.file("runs");
  const std::string first = RunLoggerOptions::automatic_run_dir("cpu", true, root);
  const std::string second = RunLoggerOptions::automatic_run_dir("cpu", true, root);
  EXPECT_TRUE(fs::is_directory(first));
  EXPECT_TRUE(fs::is_directory(second));
  EXPECT_NE(first, second);
  const std::string name = fs::path(first).filename().string();
  EXPECT_TRUE(std::regex_match(name, std::regex(R"(\d{8}-\d{6}-cpu(-\d+)?)"))) << name;
  // Within one second the second run gets -2 (or, past a second boundary, a new time).
  const std::string other = fs::path(second).filename().string();
  EXPECT_TRUE(other == name + "-2" || std::regex_match(other, std::regex(R"(\d{8}-\d{6}-cpu)"))) << other;
  // Only the name: nothing created.
  const std::string named = RunLoggerOptions::automatic_run_dir("cuda", false, dir.file("other"));
  EXPECT_FALSE(fs::exists(dir.file("other")));
  EXPECT_NE(named.find("-cuda"), std::string::npos);
}

TEST(RunFolder, AResumeContinuesTheRunThatWroteItsCheckpointOnly) {
  torchfit::testing::TempDir dir("runfolder");
  fs::create_directories(dir.path / "run");
  {
    RunLoggerOptions o(dir.file("run"));
    EXPECT_TRUE(o.continue_run_of(dir.file("run/model.ckpt")));  // the checkpoint lies in the folder
    EXPECT_TRUE(o.append());
  }
  {  // elsewhere, but run.json names it (through "..")
    std::ofstream(dir.file("run/run.json"))
        << nlohmann::json({{"arguments", {{"checkpoint", dir.file("ck/../ck/x.ckpt")}}}});
    RunLoggerOptions o(dir.file("run"));
    EXPECT_TRUE(o.continue_run_of(dir.file("ck/x.ckpt")));
  }
  {  // another checkpoint, no checkpoint, an unreadable run.json: the files start fresh
    RunLoggerOptions o(dir.file("run"));
    EXPECT_FALSE(o.continue_run_of(dir.file("ck/y.ckpt")));
    EXPECT_FALSE(o.continue_run_of(""));
    EXPECT_FALSE(o.append());
    std::ofstream(dir.file("run/run.json")) << "{ not json";
    EXPECT_FALSE(o.continue_run_of(dir.file("ck/x.ckpt")));
    std::ofstream(dir.file("run/run.json")) << R"({"arguments": {"checkpoint": 3}})";
    EXPECT_FALSE(o.continue_run_of(dir.file("ck/x.ckpt")));
  }
}

TEST(RunFolder, PrepareContinuesTheResumedRunAndReplacesAnother) {
  torchfit::testing::TempDir dir("runfolder_prepare");
  fs::create_directories(dir.path / "run");
  std::ofstream(dir.file("run/steps.csv")) << "epoch,step\n";
  {
    RunLoggerOptions o(dir.file("run"));
    o.prepare(dir.file("run/model.ckpt"));  // the run that wrote the checkpoint: continued
    EXPECT_TRUE(o.append());
    RunLoggerOptions fresh(dir.file("run"));
    fresh.prepare();  // a new run: its files are replaced (a warning), nothing appended
    EXPECT_FALSE(fresh.append());
  }
  // RunLogger.AnotherFolderIntoALiveRunsFolderIsRefusedToo: prepare() refuses a folder a live run holds.
}
