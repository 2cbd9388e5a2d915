#pragma once
/// @file optimizer_overrides.h
/// A resumed run's optimizer: the options its checkpoint saved, each setting the caller gives replacing
/// the saved one — decided before anything runs.
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <torchfit/model/compile.h>
#include <torchfit/saving/checkpoint.h>

namespace torchfit {

/// What a resumed run changes. Names are Keras's argument names (OptimizerOptions::args(),
/// LearningRateScheduleOptions::args()).
struct OptimizerOverrides {
  /// The values of the settings named in `args`.
  OptimizerOptions given;
  /// The settings given: "clipnorm", "clipvalue" or "global_clipnorm" (any one replaces all three: one
  /// clipping, the given one), "weight_decay", "use_ema", "ema_momentum", "gradient_accumulation_steps".
  std::set<std::string> args;
  /// A constant learning rate, or the rate of a cosine/exponential schedule (its warm-up target when it has
  /// one); unset: the saved rate.
  std::optional<double> learning_rate;
  /// A schedule given. Of the saved schedule's name: the arguments in `schedule_args` replace the saved
  /// ones ("decay_steps", "alpha", "decay_rate", "boundaries", "values", "warmup_steps" — a warm-up added
  /// to a schedule without one starts at 0 and reaches the saved rate). Of another name: it replaces the
  /// saved schedule, starting from `learning_rate` or else the saved rate; its decay_steps 0 means the
  /// run's updates after the warm-up (`batches` / gradient_accumulation_steps − warmup_steps, at least 1).
  std::optional<LearningRateScheduleOptions> schedule;
  std::set<std::string> schedule_args;
  /// The batches the whole run takes (epochs × steps per epoch), for a new schedule's decay_steps.
  int64_t batches = 0;
  /// Another update rule (OptimizerOptions::from_keras of a Keras optimizer name or object): its name and
  /// own settings replace the saved ones. The learning rate and schedule stay the saved ones (with the
  /// overrides above) unless it gives its own and no `learning_rate`/`schedule` override is given;
  /// clipping, EMA and gradient accumulation stay the saved ones; weight_decay stays the saved one when
  /// given in `args`, or when the rule leaves it at its Keras default and keeps the saved optimizer's name.
  std::optional<OptimizerOptions> update_rule;
};

/// The optimizer options of a run resumed from `info` (saved_optimizer_options) with `overrides` applied.
/// Errors: OptionError naming the setting ("learning_rate" on a saved piecewise schedule without a new
/// schedule; "gradient_accumulation_steps" changed in the middle of an accumulation; "learning_rate_schedule"
/// for a merged schedule check_schedule refuses); ConfigError from saved_optimizer_options for a saved
/// config that cannot be read.
OptimizerOptions resumed_optimizer_options(const saving::CheckpointInfo& info, const OptimizerOverrides& overrides);

/// Checks, before a run of `batches` batches starts, the optimizer settings a caller took from its user:
/// gradient_accumulation_steps not above `batches`; each name in `schedule_args` (OptimizerOverrides'
/// schedule names, and "learning_rate" for the schedule's rate) read by the schedule of `options` (not
/// checked without a schedule); the schedule valid (check_schedule) unless `resumed` (a resume may give a
/// part of one: resumed_optimizer_options checks the merged schedule). Warns when a warm-up reaches past the
/// run's weight updates (batches / gradient_accumulation_steps). Errors: OptionError naming the setting.
void check_run_optimizer(const OptimizerOptions& options, const std::set<std::string>& schedule_args, int64_t batches,
                         bool resumed);

}  // namespace torchfit
