#pragma once
/// @file lr_schedules.h
/// keras.optimizers.schedules: CosineDecay (with warm-up), ExponentialDecay, PiecewiseConstantDecay,
/// CosineDecayRestarts, InverseTimeDecay, PolynomialDecay (keras/src/optimizers/schedules/
/// learning_rate_schedule.py).
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
/// - cosine_restarts (CosineDecayRestarts), f = step / first_decay_steps: t_mul = 1 ⇒ i = ⌊f⌋, f −= i;
///   else i = ⌊log(1 − f(1 − t_mul)) / log t_mul⌋, f = (f − (1 − t_mulⁱ)/(1 − t_mul)) / t_mulⁱ;
///   lr0 · ((1 − alpha) · ½ m_mulⁱ (1 + cos(π f)) + alpha).
/// - inverse_time (InverseTimeDecay): lr0 / (1 + decay_rate · step / decay_steps) (the ratio floored with
///   staircase).
/// - polynomial (PolynomialDecay): (lr0 − end) · (1 − s / D)^power + end, with s = min(step, D), D =
///   decay_steps; with cycle s = step, D = decay_steps · ceil(step / decay_steps) (1 at step 0).
/// Errors: ConfigError from check_schedule.
double schedule_learning_rate(const LearningRateScheduleOptions& schedule, double initial_learning_rate, int64_t step);

/// Errors: ConfigError naming the option: an unknown name; cosine_restarts without first_decay_steps ≥ 1,
/// t_mul > 0, m_mul ≥ 0; polynomial with end_learning_rate < 0 or a power not finite; inverse_time with
/// decay_rate < 0; the others (but piecewise) without decay_steps ≥ 1;
/// a negative warmup_steps or alpha outside [0, 1]; exponential without decay_rate > 0; piecewise whose
/// values are not one more than its increasing boundaries, or a rate that is not finite and ≥ 0.
void check_schedule(const LearningRateScheduleOptions& schedule);

/// The Keras config arguments the schedule `name` reads (LearningRateScheduleOptions::args): cosine
/// {initial_learning_rate, decay_steps, alpha, warmup_target, warmup_steps}, exponential
/// {initial_learning_rate, decay_steps, decay_rate, staircase} (inverse_time too), piecewise {boundaries,
/// values}, cosine_restarts {initial_learning_rate, first_decay_steps, t_mul, m_mul, alpha}, polynomial
/// {initial_learning_rate, decay_steps, end_learning_rate, power, cycle}. Errors:
/// ConfigError for an unknown name.
std::set<std::string> schedule_arguments(const std::string& name);

/// Keras's serialisation: {"class_name": "CosineDecay", "config": {"initial_learning_rate", "decay_steps",
/// "alpha", "warmup_target", "warmup_steps"}} (ExponentialDecay, PiecewiseConstantDecay likewise).
nlohmann::json schedule_config(const LearningRateScheduleOptions& schedule, double initial_learning_rate);

}  // namespace torchfit
