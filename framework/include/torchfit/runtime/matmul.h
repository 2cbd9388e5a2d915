#pragma once
/// @file matmul.h
/// The articles' matrix-multiply experiment, measured correctly: a naive triple loop against
/// LibTorch on the CPU (all cores) and on CUDA (warm-up excluded, synchronised before every clock
/// read). Used by apps/matmul_bench; the kernels are public so tests can check them.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace torchfit::runtime {

/// C = A·B with the textbook i-j-k loop (C[i][j] = Σ_k A[i][k]·B[k][j], float accumulator, one
/// thread, no blocking or vectorisation hints) — the article's "naive" method.
/// @param a float32 CPU tensor [n, k]; @param b float32 CPU tensor [k, m] (made contiguous here).
/// @return float32 CPU tensor [n, m].
/// @throws std::invalid_argument for non-2-D, non-float32, non-CPU inputs or mismatched inner sizes.
at::Tensor naive_matmul(const at::Tensor& a, const at::Tensor& b);

/// Normwise relative error max|result − reference| / max|reference| (both moved to CPU double);
/// 0 when both are all zero. @throws std::invalid_argument when the shapes differ.
double max_relative_error(const at::Tensor& result, const at::Tensor& reference);

/// Settings of one benchmark run (defaults as in matmul_bench's flags).
struct MatmulBenchOptions {
  std::vector<int64_t> sizes{500};  ///< square sizes n (A, B, C are n×n float32)
  int64_t naive_max = 1024;         ///< the naive loop runs only for n ≤ naive_max (it is O(n³) on one core)
  bool run_cuda = false;            ///< also time LibTorch on cuda:0 (the caller checks availability)
  double min_time_s = 0.3;          ///< repeat each method until this much time is spent …
  int min_repeats = 3;              ///< … with at least this many timed runs (the naive loop: 1) …
  int max_repeats = 50;             ///< … and at most this many
  int cuda_warmup = 3;              ///< untimed CUDA products first (context, cuBLAS handle, kernels)
  std::uint64_t seed = 0;           ///< inputs are U[0, 1) from a CPU generator with this seed
};

/// One measured (size, method) pair. Times are medians over `repeats` runs.
struct MatmulRow {
  int64_t n = 0;
  std::string method;  ///< "naive i-j-k loop", "LibTorch at::mm", "LibTorch at::mm (unsynchronised)"
  std::string device;  ///< "cpu" or "cuda:0"
  int threads = 1;     ///< CPU threads used (1 for the naive loop, at::get_num_threads() for LibTorch)
  int repeats = 0;
  double ms = 0;                ///< median milliseconds per product
  double gflops = 0;            ///< 2·n³ / time
  double speedup_vs_naive = 0;  ///< naive ms / this ms at the same n; 0 when the naive loop did not run
  double share_of_best = 0;     ///< gflops / best valid gflops measured in this run on the same device kind
  double max_rel_error = 0;     ///< vs. a float64 LibTorch CPU product of the same inputs
  bool valid = true;            ///< false for the unsynchronised CUDA figure (not a product's time)
};

/// Runs the benchmark over `options.sizes`; calls `progress` after each row (may be empty).
/// @throws std::invalid_argument for sizes < 1.
std::vector<MatmulRow> run_matmul_bench(const MatmulBenchOptions& options,
                                        const std::function<void(const MatmulRow&)>& progress = {});

/// Fixed-width text table of the rows (one header line, one line per row).
std::string format_matmul_table(const std::vector<MatmulRow>& rows);

}  // namespace torchfit::runtime
