#pragma once
/// @file timing.h
/// Step timings and their statistics — the one definition behind steps.csv, epochs.csv, run.json,
/// train_cnn's closing "Timing on …" line and bench_step.
#include <cstdint>
#include <vector>

namespace torchfit {

/// Timing of one training step, in milliseconds. On CUDA each clock read follows a synchronisation.
struct StepTiming {
  int epoch = 0;            ///< 1-based
  int64_t step = 0;         ///< 1-based within the epoch
  int64_t size = 0;         ///< images in the batch (the last batch of a pass may be partial)
  double data_ms = 0;       ///< blocked waiting on the data source (prefetch queue)
  double h2d_ms = 0;        ///< host → device copy
  double compute_ms = 0;    ///< forward + loss + backward + optimizer step
  double step_ms = 0;       ///< data + copy + compute + metric bookkeeping (callbacks are not included)
  double allreduce_ms = 0;  ///< data-parallel runs: waiting for the gradient allreduce (part of compute_ms)
  bool warmup = false;      ///< one of fit()'s first `warmup_steps` steps: left out of the statistics
};

/// The q-quantile (0 ≤ q ≤ 1) of `values`, linearly interpolated between order statistics (numpy's
/// default); 0 when `values` is empty.
double percentile(std::vector<double> values, double q);

/// Statistics over the timed (non-warm-up) steps of a run or an epoch.
struct TimingSummary {
  int64_t steps = 0;                ///< timed steps
  int64_t images = 0;               ///< images in the timed steps (actual batch sizes)
  double median_ms = 0;             ///< median step_ms
  double p90_ms = 0;                ///< 90th percentile of step_ms
  double images_per_s = 0;          ///< images / Σ step_ms
  double data_wait_share = 0;       ///< Σ data_ms / Σ step_ms (0..1)
  double allreduce_ms_median = 0;   ///< median allreduce_ms (data-parallel runs; else 0)
  double allreduce_wait_share = 0;  ///< Σ allreduce_ms / Σ step_ms (0..1)
  std::vector<double> step_ms;      ///< the timed steps' step_ms, in order
};

/// Achieved rate: `flops_per_step` floating-point operations done in `ms_per_step` milliseconds, in
/// GFLOP/s; 0 when ms_per_step is 0 (no timed step).
inline double gflops_per_s(double flops_per_step, double ms_per_step) {
  return ms_per_step > 0 ? flops_per_step / (ms_per_step / 1000.0) / 1e9 : 0.0;
}

/// Mean images per timed step of `s` (the actual batch sizes; a short last batch counts as it is).
inline double images_per_step(const TimingSummary& s) {
  return s.steps > 0 ? static_cast<double>(s.images) / static_cast<double>(s.steps) : 0.0;
}

/// Achieved training rate of `s` in GFLOP/s: `flops_per_sample` × images_per_step(s) in the median step.
inline double achieved_gflops_per_s(const TimingSummary& s, double flops_per_sample) {
  return gflops_per_s(flops_per_sample * images_per_step(s), s.median_ms);
}

/// Summarises `timings`: only the non-warm-up steps, and only those of `epoch` (1-based) when
/// epoch > 0. When every selected step is warm-up, images_per_s is taken over the warm-up steps
/// instead (so a short epoch still reports a rate) and the other figures are 0.
TimingSummary summarize_timings(const std::vector<StepTiming>& timings, int epoch = 0);

}  // namespace torchfit
