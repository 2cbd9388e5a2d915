// Tests for apps/matmul_bench/matmul_csv.cpp: matmul_bench --csv's rows, written by hand here.
#include <gtest/gtest.h>

#include "../../apps/matmul_bench/matmul_csv.h"

TEST(MatmulCsv, HeaderAndOneLinePerRowWithFixedPrecisionAndQuotedMethod) {
  torchfit::runtime::MatmulRow naive;
  naive.n = 500;
  naive.method = "naive i-j-k loop";
  naive.device = "cpu";
  naive.threads = 1;
  naive.repeats = 3;
  naive.ms = 125.5;
  naive.gflops = 1.9920318;
  naive.speedup_vs_naive = 1.0;
  naive.share_of_best = 0.01;
  naive.max_rel_error = 1.5e-7;
  torchfit::runtime::MatmulRow odd = naive;
  odd.method = "a, \"quoted\" method";
  odd.valid = false;
  EXPECT_EQ(matmul_bench::matmul_csv({naive, odd}),
            "n,method,device,threads,repeats,ms,gflops,speedup_vs_naive,share_of_best,max_rel_error,valid\n"
            "500,naive i-j-k loop,cpu,1,3,125.500000,1.9920,1.0000,0.010000,1.500e-07,1\n"
            "500,\"a, \"\"quoted\"\" method\",cpu,1,3,125.500000,1.9920,1.0000,0.010000,1.500e-07,0\n");
}
