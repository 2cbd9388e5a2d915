// What a training program says after fit() (run_report.h).
#include <torchfit/training/run_report.h>

#include <algorithm>
#include <cstdio>

#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/matmul.h>
#include <torchfit/training/timing.h>

namespace torchfit {
namespace {

// This device's measured sgemm peak: a 2048×2048 product, the best the BLAS/cuBLAS does here.
double sgemm_peak_gflops(const c10::Device& device) {
  runtime::MatmulBenchOptions mm;
  mm.sizes = {2048};
  mm.naive_max = 0;
  mm.run_cuda = device.is_cuda();
  mm.min_time_s = 0.2;
  double peak = 0;
  for (const auto& row : runtime::run_matmul_bench(mm)) {
    if (row.valid && (row.device == "cpu") == device.is_cpu()) peak = std::max(peak, row.gflops);
  }
  return peak;
}

// The achieved rate as a share of the sgemm peak, or why there is none.
std::string share_of_peak_text(double achieved, double peak, const mixed_precision::Policy& policy) {
  if (policy.is_mixed()) return "n/a (" + policy.name() + ": products in 16 bits, beyond the float32 sgemm peak)";
  if (peak <= 0 || achieved > peak) return "n/a (above the measured sgemm peak)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * achieved / peak);
  return buf;
}

}  // namespace

TimingReport report_timing(Trainer& trainer) {
  TimingReport r;
  const TimingSummary s = summarize_timings(trainer.step_timings());
  if (s.steps == 0) return r;
  const c10::Device device = trainer.device();
  const auto& model = trainer.model();
  const auto& policy = model->dtype_policy();
  const double flops_per_sample = static_cast<double>(model->train_flops_per_sample());
  const double achieved = achieved_gflops_per_s(s, flops_per_sample);
  const double peak = sgemm_peak_gflops(device);
  char line[512];
  std::snprintf(line, sizeof line,
                "Timing on %s (%s): median %.1f ms/step, p90 %.1f ms/step, %.1f images/s, data wait %.1f%% "
                "(%lld timed steps, warm-up excluded)\n",
                device.str().c_str(), policy.name().c_str(), s.median_ms, s.p90_ms, s.images_per_s,
                100.0 * s.data_wait_share, static_cast<long long>(s.steps));
  r.text = line;
  std::snprintf(line, sizeof line,
                "Compute: %.1f GFLOP per step, %.1f GFLOP/s achieved = %s of this device's measured sgemm peak "
                "(%.1f GFLOP/s)\n",
                flops_per_sample * images_per_step(s) / 1e9, achieved,
                share_of_peak_text(achieved, peak, policy).c_str(), peak);
  r.text += line;
  const bool share = peak > 0 && achieved <= peak && !policy.is_mixed();
  r.fields = {{"achieved_gflops_per_s", achieved},
              {"sgemm_peak_gflops_per_s", peak},
              {"share_of_peak", share ? nlohmann::json(achieved / peak) : nlohmann::json()}};
  return r;
}

int interrupt_exit_status(const Trainer& trainer) {
  return 128 + (trainer.interrupt_signal() ? trainer.interrupt_signal() : 2);
}

std::string interrupt_report(const Trainer& trainer, const ModelCheckpoint* checkpoint) {
  const auto& pos = trainer.position();
  std::string line = "Interrupted by " + runtime::signal_name(interrupt_exit_status(trainer) - 128) + " at epoch " +
                     std::to_string(pos.epoch + 1) + ", step " + std::to_string(pos.step);
  if (!checkpoint) return line + " (no checkpoint: nothing saved)\n";
  if (!checkpoint->saved_on_interrupt()) return line + ": no checkpoint written (weights not finite)\n";
  return line + ": checkpoint written to " + checkpoint->last_saved() + "\n";
}

}  // namespace torchfit
