#pragma once
/// @file lr_schedules.h
/// keras.optimizers.schedules: CosineDecay (with warm-up), ExponentialDecay, PiecewiseConstantDecay.
#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit {

/// The learning rate at `step` (optimizer updates applied so far, ≥ 0), lr0 = the schedule's
/// initial_learning_rate when set, else `initial_learning_rate` (the optimizer's):
/// - cosine (CosineDecay): without warmup_target, s = min(step, decay_steps):
///   lr0 · ((1 − alpha) · ½ (1 + cos(π s / decay_steps)) + alpha). With warmup_target T and warmup_steps W,
///   s = min(step, W + decay_steps): s < W ⇒ lr0 + (T − lr0) · s / W; else T · ((1 − alpha) · ½ (1 + cos(π
///   (s − W) / decay_steps)) + alpha).
/// - exponential (ExponentialDecay): lr0 · decay_rate^(step / decay_steps) (the exponent floored with
///   staircase).
/// - piecewise (PiecewiseConstantDecay): values[0] for step ≤ boundaries[0], values[i] for
///   boundaries[i−1] < step ≤ boundaries[i], values.back() after the last boundary.
/// Errors: ConfigError from check_schedule.
double schedule_learning_rate(const LearningRateScheduleOptions& schedule, double initial_learning_rate, int64_t step);

/// Errors: ConfigError naming the option: an unknown name; cosine/exponential without decay_steps ≥ 1;
/// a negative warmup_steps or alpha outside [0, 1]; exponential without decay_rate > 0; piecewise whose
/// values are not one more than its increasing boundaries, or a rate that is not finite and ≥ 0.
void check_schedule(const LearningRateScheduleOptions& schedule);

/// The Keras config arguments the schedule `name` reads (LearningRateScheduleOptions::args): cosine
/// {initial_learning_rate, decay_steps, alpha, warmup_target, warmup_steps}, exponential
/// {initial_learning_rate, decay_steps, decay_rate, staircase}, piecewise {boundaries, values}. Errors:
/// ConfigError for an unknown name.
std::set<std::string> schedule_arguments(const std::string& name);

/// Keras's serialisation: {"class_name": "CosineDecay", "config": {"initial_learning_rate", "decay_steps",
/// "alpha", "warmup_target", "warmup_steps"}} (ExponentialDecay, PiecewiseConstantDecay likewise).
nlohmann::json schedule_config(const LearningRateScheduleOptions& schedule, double initial_learning_rate);

}  // namespace torchfit
