#include <torchfit/training/timing.h>

#include <algorithm>
#include <cmath>

namespace torchfit {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = static_cast<size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

TimingSummary summarize_timings(const std::vector<StepTiming>& timings, int epoch) {
  TimingSummary s;
  double data_total = 0, step_total = 0, warm_total = 0, allreduce_total = 0;
  std::vector<double> allreduce;
  int64_t warm_images = 0;
  for (const auto& t : timings) {
    if (epoch > 0 && t.epoch != epoch) continue;
    if (t.warmup) {
      warm_total += t.step_ms;
      warm_images += t.size;
      continue;
    }
    s.step_ms.push_back(t.step_ms);
    s.images += t.size;
    data_total += t.data_ms;
    allreduce_total += t.allreduce_ms;
    allreduce.push_back(t.allreduce_ms);
    step_total += t.step_ms;
  }
  s.steps = static_cast<int64_t>(s.step_ms.size());
  if (step_total > 0) {
    s.median_ms = percentile(s.step_ms, 0.5);
    s.p90_ms = percentile(s.step_ms, 0.9);
    s.images_per_s = static_cast<double>(s.images) / (step_total / 1000.0);
    s.data_wait_share = data_total / step_total;
    s.allreduce_ms_median = percentile(allreduce, 0.5);
    s.allreduce_wait_share = allreduce_total / step_total;
  } else if (warm_total > 0) {
    s.images_per_s = static_cast<double>(warm_images) / (warm_total / 1000.0);
  }
  return s;
}

}  // namespace torchfit
