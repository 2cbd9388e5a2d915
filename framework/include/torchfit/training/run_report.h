#pragma once
/// @file run_report.h
/// What a training program says after fit(): the article's comparison figure (the step times and the
/// achieved compute rate against the device's measured sgemm peak), or where an interrupted run stopped.
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

/// What report_timing found.
struct TimingReport {
  /// Two lines, each ending with '\n' ("" when no step was timed):
  ///   "Timing on cpu (float32): median M ms/step, p90 P ms/step, I images/s, data wait D% (S timed steps,
  ///    warm-up excluded)"
  ///   "Compute: G GFLOP per step, A GFLOP/s achieved = X% of this device's measured sgemm peak (K GFLOP/s)"
  /// X is "n/a (…)" under a mixed dtype policy (16-bit products are not bounded by the float32 peak) or
  /// when the peak measured below the achieved rate (a short, noisy run).
  std::string text;
  /// For run.json: achieved_gflops_per_s, sgemm_peak_gflops_per_s, share_of_peak (null when n/a). Empty
  /// when no step was timed.
  nlohmann::json fields = nlohmann::json::object();
};

/// The step timings of `trainer`'s last fit() (summarize_timings: warm-up excluded; every figure counts
/// the images actually in each batch) and its model's training FLOPs per sample, against the device's
/// sgemm peak measured now (a 2048×2048 float32 product, ~0.2 s on the trainer's device; cuBLAS on CUDA).
TimingReport report_timing(Trainer& trainer);

/// 128 + the number of the signal that stopped `trainer`'s fit(): 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP)
/// — a shell's exit status for a run stopped by that signal (130 when none was recorded).
int interrupt_exit_status(const Trainer& trainer);

/// One line, ending with '\n', for a fit() that a signal stopped: "Interrupted by SIGINT at epoch E, step S"
/// and what `checkpoint` (nullptr: none in the run) wrote when fit() stopped — ": checkpoint written to F", ": no
/// checkpoint written (weights not finite)" or " (no checkpoint: nothing saved)".
std::string interrupt_report(const Trainer& trainer, const ModelCheckpoint* checkpoint);

}  // namespace torchfit
