// train_cnn data-parallel end to end (the built binary, ranks started as torchrun starts them: RANK,
// WORLD_SIZE, MASTER_ADDR/PORT on 127.0.0.1): environment errors before any training, and a rank killed
// mid-epoch — the other exits non-zero within the timeout, naming the failed peer.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <torchfit/distributed/process_group.h>
#include <torchfit/saving/checkpoint.h>

#include "support/free_port.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"

namespace torchfit::train_cnn_distributed_test {
namespace fs = std::filesystem;
namespace {

const std::string kTrainCnn = std::string(TORCHFIT_BINARY_DIR) + "/apps/train_cnn";
using torchfit::testing::free_port;
using Env = std::map<std::string, std::string>;

// Starts train_cnn with `args` and the variables `env` added, stdout and stderr into `log`.
pid_t start(const std::vector<std::string>& args, const Env& env, const fs::path& log) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  if (!std::freopen(log.c_str(), "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(126);
  std::vector<char*> argv{const_cast<char*>(kTrainCnn.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(kTrainCnn.c_str(), argv.data());
  _exit(127);
}

// The exit status of `pid` once it ends within `limit` (-1: it did not, and was killed; -2: a signal).
int wait_for(pid_t pid, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int lines_in(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

Env rank_env(int rank, int port) {
  return {{"RANK", std::to_string(rank)}, {"WORLD_SIZE", "2"},          {"LOCAL_RANK", std::to_string(rank)},
          {"LOCAL_WORLD_SIZE", "2"},      {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", std::to_string(port)},
          {"OMP_NUM_THREADS", "1"}};
}

}  // namespace

class TrainCnnDistributed : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kTrainCnn)) GTEST_SKIP() << "train_cnn not built (TORCHFIT_BUILD_APPS=OFF)";
    if (!distributed::available()) GTEST_SKIP() << distributed::unavailable_reason();
    torchfit::testing::make_tree(dir.path / "data" / "train", {"a", "b"}, 16, 12);
  }
  std::vector<std::string> args(const std::string& run, const std::string& steps) const {
    return {"--data",
            (dir.path / "data").string(),
            "--target-size",
            "12",
            "--batch-size",
            "4",
            "--epochs",
            "1",
            "--steps-per-epoch",
            steps,
            "--threads",
            "1",
            "--workers",
            "1",
            "--dense2-units",
            "8",
            "--run-dir",
            (dir.path / run).string(),
            "--checkpoint-every",
            "2",
            "--dist-timeout",
            "30"};
  }
  torchfit::testing::TempDir dir;
};

TEST_F(TrainCnnDistributed, EnvironmentErrorsComeBeforeTraining) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}}, "MASTER_PORT is not set"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "port"}},
       "MASTER_PORT='port' is not an integer in [1, 65535]"},
      {{{"RANK", "0"}, {"WORLD_SIZE", "0"}, {"MASTER_ADDR", "127.0.0.1"}, {"MASTER_PORT", "29500"}}, "WORLD_SIZE='0'"},
      {{{"RANK", "0"}}, "RANK is set but WORLD_SIZE is not"},
      // Known before the rendezvous: refused at once, no waiting for peers (nobody listens on the port).
      {{{"RANK", "0"},
        {"WORLD_SIZE", "3"},
        {"LOCAL_RANK", "0"},
        {"LOCAL_WORLD_SIZE", "3"},
        {"MASTER_ADDR", "127.0.0.1"},
        {"MASTER_PORT", std::to_string(free_port())}},
       "--batch-size 4 is the global batch and must split evenly over WORLD_SIZE=3 processes"},
  };
  for (const auto& [env, expected] : cases) {
    const fs::path log = dir.path / "env.log";
    const int status = wait_for(start(args("env", "2"), env, log), std::chrono::seconds(60));
    const std::string out = read_file(log);
    EXPECT_EQ(status, 1) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
    EXPECT_EQ(out.find("Found"), std::string::npos) << "data read before the environment was checked:\n" << out;
  }
}

TEST_F(TrainCnnDistributed, KilledRankEndsTheOtherNamingIt) {
  const int port = free_port();
  const pid_t r0 = start(args("run", "100000"), rank_env(0, port), dir.path / "rank0.log");
  const pid_t r1 = start(args("run", "100000"), rank_env(1, port), dir.path / "rank1.log");
  // Wait (bounded) until rank 0 has logged a few steps, then kill rank 1 mid-epoch.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lines_in(dir.path / "run" / "steps.csv") < 6 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool started = lines_in(dir.path / "run" / "steps.csv") >= 6;
  kill(r1, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  const int status0 = wait_for(r0, std::chrono::seconds(60));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  wait_for(r1, std::chrono::seconds(10));
  const std::string out = read_file(dir.path / "rank0.log");
  ASSERT_TRUE(started) << "rank 0 did not reach step 5 within 120 s:\n" << out << read_file(dir.path / "rank1.log");
  EXPECT_EQ(status0, 1) << out;
  EXPECT_LT(seconds, 30.0) << "not within --dist-timeout";
  EXPECT_NE(out.find("rank 0 of 2"), std::string::npos) << out;
  EXPECT_NE(out.find("failed peer: rank 1"), std::string::npos) << out;
  // The last checkpoint (written every 2 steps by rank 0) stays loadable.
  EXPECT_NO_THROW(saving::load_model((dir.path / "run" / "model.ckpt").string())) << out;
}

}  // namespace torchfit::train_cnn_distributed_test
