// One torchrun process on its machine: its share of the cores, its device, no group for one process.
#include <gtest/gtest.h>

#include <torchfit/distributed/local_setup.h>
#include <torchfit/runtime/process.h>

using namespace torchfit;

TEST(LocalSetup, TheCoresAreSharedByTheProcessesOfOneMachine) {
  distributed::Environment env;
  env.world_size = 4;
  env.local_world_size = 2;
  const int cores = runtime::cpu_cores();
  EXPECT_EQ(distributed::local_share_of_cores(0, env), std::max(1, cores / 2));
  EXPECT_EQ(distributed::local_share_of_cores(3, env), 3);  // asked for: kept
  EXPECT_EQ(distributed::local_share_of_cores(0, std::nullopt), 0);
  env.local_world_size = 1;
  EXPECT_EQ(distributed::local_share_of_cores(0, env), 0);  // the machine's only process: all cores
  env.local_world_size = 4 * cores;                         // more processes than cores: one thread each
  EXPECT_EQ(distributed::local_share_of_cores(0, env), 1);
}

TEST(LocalSetup, OneProcessHasNoGroupAndTheCpuStaysTheCpu) {
  distributed::Environment env;
  env.local_rank = 1;
  env.local_world_size = 2;
  EXPECT_EQ(distributed::local_device("cpu", env), c10::Device(c10::kCPU));
  EXPECT_THROW(distributed::local_device("gpu", env), std::invalid_argument);
  EXPECT_EQ(distributed::join_process_group(std::nullopt, {}), nullptr);
  env.world_size = 1;
  EXPECT_EQ(distributed::join_process_group(env, {}), nullptr);
}
