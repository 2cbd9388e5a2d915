// Tests for framework/src/runtime/matmul.cpp: naive loop, error measure, benchmark rows (no wall-clock assertions).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "torchfit/runtime/matmul.h"

namespace rt = torchfit::runtime;

TEST(Matmul, NaiveLoopMatchesKnownProduct) {
  // [[1,2,3],[4,5,6]] · [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  const auto a = at::arange(1, 7, at::kFloat).reshape({2, 3});
  const auto b = at::arange(7, 13, at::kFloat).reshape({3, 2});
  const auto c = rt::naive_matmul(a, b);
  ASSERT_EQ(c.sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_FLOAT_EQ(c[0][0].item<float>(), 58.f);
  EXPECT_FLOAT_EQ(c[0][1].item<float>(), 64.f);
  EXPECT_FLOAT_EQ(c[1][0].item<float>(), 139.f);
  EXPECT_FLOAT_EQ(c[1][1].item<float>(), 154.f);
}

TEST(Matmul, NaiveLoopAgreesWithAtMm) {
  auto gen = at::detail::createCPUGenerator(7);
  const auto a = at::rand({67, 45}, gen, at::TensorOptions().dtype(at::kFloat));
  const auto b = at::rand({45, 31}, gen, at::TensorOptions().dtype(at::kFloat));
  const auto ref = at::mm(a.to(at::kDouble), b.to(at::kDouble));
  EXPECT_LT(rt::max_relative_error(rt::naive_matmul(a, b), ref), 1e-6);
  EXPECT_LT(rt::max_relative_error(at::mm(a, b), ref), 1e-6);
  // Non-contiguous input (a transpose) is handled.
  const auto at_ = a.t().contiguous().t();
  EXPECT_LT(rt::max_relative_error(rt::naive_matmul(at_, b), ref), 1e-6);
}

TEST(Matmul, NaiveLoopRejectsBadInputs) {
  EXPECT_THROW(rt::naive_matmul(at::ones({2, 3}), at::ones({2, 3})), std::invalid_argument);
  EXPECT_THROW(rt::naive_matmul(at::ones({2, 3}, at::kDouble), at::ones({3, 2}, at::kDouble)), std::invalid_argument);
  EXPECT_THROW(rt::naive_matmul(at::ones({6}), at::ones({6})), std::invalid_argument);
}

TEST(Matmul, MaxRelativeError) {
  const auto ref = at::tensor({1.0, -4.0, 2.0}, at::kDouble);
  EXPECT_DOUBLE_EQ(rt::max_relative_error(ref, ref), 0.0);
  EXPECT_DOUBLE_EQ(rt::max_relative_error(at::tensor({1.0, -3.0, 2.0}, at::kDouble), ref), 0.25);
  EXPECT_THROW(rt::max_relative_error(at::ones({2}), at::ones({3})), std::invalid_argument);
}

TEST(Matmul, BenchRowsAreConsistent) {
  rt::MatmulBenchOptions o;
  o.sizes = {48, 96};
  o.naive_max = 64;
  o.min_time_s = 0.0;
  o.min_repeats = 2;
  o.max_repeats = 2;
  int calls = 0;
  const auto rows = rt::run_matmul_bench(o, [&](const rt::MatmulRow&) { ++calls; });
  ASSERT_EQ(rows.size(), 3u);  // naive + CPU at 48, CPU only at 96 (> naive_max)
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(rows[0].method, "naive i-j-k loop");
  EXPECT_EQ(rows[0].threads, 1);
  EXPECT_EQ(rows[1].method, "LibTorch at::mm");
  EXPECT_EQ(rows[2].n, 96);
  EXPECT_EQ(rows[1].repeats, 2);
  double best = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.device, "cpu");
    EXPECT_GT(r.ms, 0.0);
    EXPECT_NEAR(r.gflops, 2.0 * r.n * r.n * r.n / (r.ms * 1e6), 1e-9 * r.gflops);
    EXPECT_LT(r.max_rel_error, 1e-5);
    EXPECT_GT(r.share_of_best, 0.0);
    EXPECT_LE(r.share_of_best, 1.0 + 1e-12);
    best = std::max(best, r.share_of_best);
  }
  EXPECT_DOUBLE_EQ(best, 1.0);
  EXPECT_NEAR(rows[1].speedup_vs_naive, rows[0].ms / rows[1].ms, 1e-9);
  EXPECT_EQ(rows[2].speedup_vs_naive, 0.0);
  EXPECT_THROW(rt::run_matmul_bench([] {
                 rt::MatmulBenchOptions b;
                 b.sizes = {0};
                 return b;
               }()),
               std::invalid_argument);
}

TEST(Matmul, Bench_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  rt::MatmulBenchOptions o;
  o.sizes = {256};
  o.naive_max = 0;
  o.run_cuda = true;
  o.min_time_s = 0.0;
  const auto rows = rt::run_matmul_bench(o);
  ASSERT_EQ(rows.size(), 3u);  // CPU, CUDA synchronised, CUDA unsynchronised
  EXPECT_EQ(rows[1].device, "cuda:0");
  EXPECT_TRUE(rows[1].valid);
  EXPECT_FALSE(rows[2].valid);
  EXPECT_LT(rows[1].max_rel_error, 1e-3);  // TF32 would still pass this
}
