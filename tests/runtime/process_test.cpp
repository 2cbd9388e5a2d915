// Tests for framework/src/runtime/process.cpp: init_process, cpu_cores, memory retention.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "torchfit/runtime/process.h"

namespace rt = torchfit::runtime;

TEST(Process, CpuCoresIsPositiveAndAtMostHardware) {
  const int n = rt::cpu_cores();
  EXPECT_GE(n, 1);
  EXPECT_LE(n, std::max(1u, std::thread::hardware_concurrency()));
}

TEST(Process, InitProcessSetsThreadsAndIsIdempotent) {
  const int before = at::get_num_threads();
  // The first call in this test binary decides the default; later default calls keep the setting.
  const int first = rt::init_process();
  EXPECT_EQ(first, at::get_num_threads());
  EXPECT_EQ(rt::init_process(1), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  EXPECT_EQ(rt::init_process(), 1) << "threads = 0 after the first call keeps the current setting";
  EXPECT_EQ(rt::init_process(2), 2);
  EXPECT_EQ(at::get_num_threads(), 2);
  EXPECT_EQ(rt::init_process(rt::cpu_cores()), rt::cpu_cores());
  EXPECT_THROW(rt::init_process(-1), std::invalid_argument);
  const auto mem = rt::memory_retention();
  EXPECT_NE(mem.method, "not initialised");
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer replaces malloc: mallopt is refused, and init_process says so.
  EXPECT_FALSE(mem.applied);
  EXPECT_NE(mem.method.find("refused"), std::string::npos) << mem.method;
#elif defined(__GLIBC__)
  if (std::getenv("TORCHFIT_MALLOC_DEFAULTS") == nullptr) {
    EXPECT_TRUE(mem.applied) << mem.method;
    EXPECT_NE(mem.method.find("mallopt"), std::string::npos) << mem.method;
  }
#endif
  at::set_num_threads(before > 0 ? before : 1);
  rt::init_process(rt::cpu_cores());
}
