// Tests for framework/src/runtime/process.cpp: init_process, cpu_cores, memory retention.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
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

TEST(Process, BlasCoretypeFollowsTheWidestVectorUnit) {
  rt::CpuVectorFeatures f;
  EXPECT_EQ(rt::blas_coretype_for(f), "") << "SSE only: nothing better than OpenBLAS's fallback";
  f.avx = true;
  EXPECT_EQ(rt::blas_coretype_for(f), "Sandybridge");
  f.avx2 = true;
  EXPECT_EQ(rt::blas_coretype_for(f), "Sandybridge") << "AVX2 without FMA is not Haswell";
  f.fma = true;
  EXPECT_EQ(rt::blas_coretype_for(f), "Haswell");
  f.avx512f = true;
  EXPECT_EQ(rt::blas_coretype_for(f), "Haswell") << "AVX-512 F alone is not SkylakeX";
  f.avx512bw = f.avx512dq = f.avx512vl = true;
  EXPECT_EQ(rt::blas_coretype_for(f), "SkylakeX");
}

TEST(Process, BlasCoreRankOrdersOpenBlasCoreNames) {
  EXPECT_EQ(rt::blas_core_rank("Prescott"), 1);
  EXPECT_EQ(rt::blas_core_rank("PRESCOTT"), 1);
  EXPECT_EQ(rt::blas_core_rank("Sandybridge"), 2);
  EXPECT_EQ(rt::blas_core_rank("Haswell"), 3);
  EXPECT_EQ(rt::blas_core_rank("Zen"), 3);
  EXPECT_EQ(rt::blas_core_rank("SkylakeX"), 4);
  EXPECT_EQ(rt::blas_core_rank("Cooperlake"), 4);
  EXPECT_EQ(rt::blas_core_rank("SomeFutureCore"), 0) << "unknown names are trusted, not replaced";
  EXPECT_EQ(rt::blas_core_rank(""), 0);
}

TEST(Process, BlasKernelsUseTheCpuAfterInitProcess) {
  rt::init_process();
  const rt::BlasKernels b = rt::blas_kernels();
  EXPECT_NE(b.method, "not initialised");
  if (!b.openblas) GTEST_SKIP() << b.method;
  EXPECT_FALSE(b.active.empty());
  const std::string want = rt::blas_coretype_for(rt::cpu_vector_features());
  const bool user_choice =
      std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv("TORCHFIT_BLAS_DEFAULTS") != nullptr;
  if (!want.empty() && !user_choice && rt::blas_core_rank(b.detected) != 0 &&
      b.method.find("not accepted") == std::string::npos && b.method.find("no run-time") == std::string::npos) {
    EXPECT_GE(rt::blas_core_rank(b.active), rt::blas_core_rank(want)) << b.method;
    if (rt::blas_core_rank(b.detected) < rt::blas_core_rank(want)) {
      auto lower = [](std::string v) {
        for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return v;
      };
      EXPECT_EQ(lower(b.active), lower(want)) << "the requested core itself, not OpenBLAS's fallback: " << b.method;
    }
  }
  // Whatever kernels are active, a product is still right: 64×64 ones · ones = 64 everywhere.
  const at::Tensor a = at::ones({64, 64}, at::kFloat);
  EXPECT_TRUE(at::mm(a, a).eq(64).all().item<bool>());
  // A non-trivial product against float64.
  const at::Tensor x = at::rand({257, 129}, at::kFloat), y = at::rand({129, 190}, at::kFloat);
  const double err =
      (at::mm(x, y).to(at::kDouble) - at::mm(x.to(at::kDouble), y.to(at::kDouble))).abs().max().item<double>();
  EXPECT_LT(err, 1e-3);
}
