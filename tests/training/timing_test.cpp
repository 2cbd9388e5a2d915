// TimingSummary: the statistics behind epochs.csv, run.json, train_cnn and bench_step.
#include <gtest/gtest.h>

#include <torchfit/training/timing.h>

using namespace torchfit;

namespace {
StepTiming step(int epoch, int64_t size, double data_ms, double step_ms, bool warmup = false) {
  StepTiming t;
  t.epoch = epoch;
  t.size = size;
  t.data_ms = data_ms;
  t.step_ms = step_ms;
  t.warmup = warmup;
  return t;
}
}  // namespace

TEST(Timing, PercentileInterpolatesLikeNumpy) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({10, 20, 30, 40, 50}, 0.9), 46.0);
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(percentile({7}, 0.9), 7.0);
}

TEST(Timing, SummaryLeavesOutWarmupAndCountsActualBatchSizes) {
  // A partial last batch (2 images) must not count as a full one (32).
  const std::vector<StepTiming> t = {step(1, 32, 50, 1000, true), step(1, 32, 10, 100), step(1, 32, 20, 300),
                                     step(2, 2, 5, 100)};
  const TimingSummary all = summarize_timings(t);
  EXPECT_EQ(all.steps, 3);
  EXPECT_EQ(all.images, 66);
  EXPECT_DOUBLE_EQ(all.median_ms, 100.0);
  EXPECT_DOUBLE_EQ(all.p90_ms, 260.0);
  EXPECT_DOUBLE_EQ(all.images_per_s, 66.0 / 0.5);
  EXPECT_DOUBLE_EQ(all.data_wait_share, 35.0 / 500.0);
  EXPECT_EQ(all.step_ms, (std::vector<double>{100, 300, 100}));
  const TimingSummary second = summarize_timings(t, 2);
  EXPECT_EQ(second.steps, 1);
  EXPECT_DOUBLE_EQ(second.images_per_s, 20.0);
}

TEST(Timing, AnEpochOfOnlyWarmupStepsStillReportsARate) {
  const TimingSummary s = summarize_timings({step(1, 8, 1, 200, true), step(1, 8, 1, 200, true)});
  EXPECT_EQ(s.steps, 0);
  EXPECT_DOUBLE_EQ(s.median_ms, 0.0);
  EXPECT_DOUBLE_EQ(s.images_per_s, 40.0);
  EXPECT_DOUBLE_EQ(summarize_timings({}).images_per_s, 0.0);
}
