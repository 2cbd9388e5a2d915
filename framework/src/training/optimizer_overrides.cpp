// A resumed run's optimizer options (optimizer_overrides.h).
#include <torchfit/training/optimizer_overrides.h>

#include <algorithm>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/resume.h>

namespace torchfit {
namespace {

// The rate a cosine or exponential schedule starts from, or reaches after its warm-up.
void set_schedule_rate(LearningRateScheduleOptions& s, double lr) {
  if (s.warmup_target())
    s.warmup_target(lr);
  else
    s.initial_learning_rate(lr);
}

double schedule_rate(const LearningRateScheduleOptions& s, double fallback) {
  if (s.name() == "piecewise") return s.values().empty() ? fallback : s.values().front();
  return s.warmup_target().value_or(s.initial_learning_rate().value_or(fallback));
}

// The saved schedule with the arguments given replacing its own.
void merge_schedule(const OptimizerOverrides& ov, LearningRateScheduleOptions& s) {
  const auto& g = *ov.schedule;
  const auto given = [&](const char* arg) { return ov.schedule_args.count(arg) > 0; };
  if (given("decay_steps")) s.decay_steps(g.decay_steps());
  if (given("alpha")) s.alpha(g.alpha());
  if (given("decay_rate")) s.decay_rate(g.decay_rate());
  if (given("boundaries")) s.boundaries(g.boundaries());
  if (given("values")) s.values(g.values());
  if (given("warmup_steps")) {
    if (!s.warmup_target()) s.warmup_target(s.initial_learning_rate()).initial_learning_rate(0.0);
    s.warmup_steps(g.warmup_steps());
  }
  if (ov.learning_rate) set_schedule_rate(s, *ov.learning_rate);
}

void resume_schedule(const OptimizerOverrides& ov, OptimizerOptions& o) {
  auto& saved = o.learning_rate_schedule();
  if (ov.learning_rate && saved && saved->name() == "piecewise" && !ov.schedule) {
    throw OptionError("learning_rate",
                      "the checkpoint follows a piecewise schedule, whose rates are its values (give a piecewise "
                      "schedule with values)");
  }
  if (!ov.schedule) {
    if (saved && ov.learning_rate) set_schedule_rate(*saved, *ov.learning_rate);
    return;
  }
  if (saved && saved->name() == ov.schedule->name()) {
    merge_schedule(ov, *saved);
  } else {
    const double rate = ov.learning_rate.value_or(saved ? schedule_rate(*saved, o.learning_rate()) : o.learning_rate());
    LearningRateScheduleOptions fresh = *ov.schedule;
    if (fresh.warmup_target()) fresh.warmup_target(rate);  // else the optimizer's rate, as a new run's
    if (fresh.name() != "piecewise" && fresh.decay_steps() == 0) {
      const int64_t updates = ov.batches / std::max<int64_t>(1, o.gradient_accumulation_steps());
      fresh.decay_steps(std::max<int64_t>(1, updates - fresh.warmup_steps()));
    }
    o.learning_rate(rate);
    saved = fresh;
  }
  try {
    check_schedule(*saved);
  } catch (const ConfigError& e) {
    throw OptionError("learning_rate_schedule", e.what());
  }
}

// `saved` (its overrides applied) under the update rule `ov.update_rule` (OptimizerOverrides::update_rule).
OptimizerOptions with_update_rule(const OptimizerOverrides& ov, const OptimizerOptions& saved) {
  OptimizerOptions o = *ov.update_rule;
  const bool own_rate = o.learning_rate() >= 0 || o.learning_rate_schedule();
  if (!own_rate || ov.learning_rate || ov.schedule)
    o.learning_rate(saved.learning_rate()).learning_rate_schedule(saved.learning_rate_schedule());
  o.clipnorm(saved.clipnorm()).clipvalue(saved.clipvalue()).global_clipnorm(saved.global_clipnorm());
  const bool default_decay = o.weight_decay() == OptimizerOptions::kKerasDefault;
  if (ov.args.count("weight_decay") || (default_decay && saved.name() == o.name()))
    o.weight_decay(saved.weight_decay());  // else the rule's, or its Keras default (AdamW's 0.004)
  o.use_ema(saved.use_ema()).ema_momentum(saved.ema_momentum());
  return o.gradient_accumulation_steps(saved.gradient_accumulation_steps());
}

}  // namespace

OptimizerOptions resumed_optimizer_options(const saving::CheckpointInfo& info, const OptimizerOverrides& ov) {
  OptimizerOptions o = saved_optimizer_options(info);
  const auto given = [&](const char* arg) { return ov.args.count(arg) > 0; };
  if (given("clipnorm") || given("clipvalue") || given("global_clipnorm"))
    o.clipnorm(ov.given.clipnorm()).clipvalue(ov.given.clipvalue()).global_clipnorm(ov.given.global_clipnorm());
  if (given("weight_decay")) o.weight_decay(ov.given.weight_decay());
  if (given("use_ema")) o.use_ema(ov.given.use_ema());
  if (given("ema_momentum")) o.ema_momentum(ov.given.ema_momentum());
  const auto& state = info.optimizer_features;
  const int64_t saved_steps = o.gradient_accumulation_steps();
  const int64_t accumulated = state.is_object() ? state.value("accumulated", int64_t{0}) : 0;
  const int64_t steps = ov.given.gradient_accumulation_steps();
  if (given("gradient_accumulation_steps") && steps != saved_steps && accumulated > 0) {
    throw OptionError("gradient_accumulation_steps",
                      "the checkpoint is in the middle of an accumulation of " + std::to_string(saved_steps) +
                          " batches (" + std::to_string(accumulated) + " done): resume with the saved value, not " +
                          std::to_string(steps));
  }
  if (given("gradient_accumulation_steps")) o.gradient_accumulation_steps(steps);
  // A constant rate: FitOptions::resume_learning_rate applies it to the optimizer (the saved rate otherwise).
  if (ov.learning_rate && !o.learning_rate_schedule()) o.learning_rate(*ov.learning_rate);
  resume_schedule(ov, o);
  return ov.update_rule ? with_update_rule(ov, o) : o;
}

void check_run_optimizer(const OptimizerOptions& options, const std::set<std::string>& schedule_args, int64_t batches,
                         bool resumed) {
  const int64_t accumulation = options.gradient_accumulation_steps();
  if (accumulation > batches) {
    throw OptionError("gradient_accumulation_steps", std::to_string(accumulation) + " is more than the run's " +
                                                         std::to_string(batches) +
                                                         " batches (epochs x steps per epoch): the weights "
                                                         "would never be updated");
  }
  const auto& schedule = options.learning_rate_schedule();
  if (!schedule) return;
  const auto reads = schedule_arguments(schedule->name());
  for (const std::string& arg : schedule_args) {
    if (reads.count(arg == "learning_rate" ? "initial_learning_rate" : arg)) continue;
    throw OptionError(arg, "the " + schedule->name() + " schedule has no such setting (" +
                               (arg == "learning_rate"  ? "its rates are its values"
                                : arg == "warmup_steps" ? "only cosine has a warm-up"
                                                        : "it belongs to another schedule") +
                               ")");
  }
  const int64_t updates = batches / std::max<int64_t>(1, accumulation);
  if (schedule->warmup_steps() > 0 && schedule->warmup_steps() >= updates) {
    torchfit::logger().warn(
        "warmup_steps {} reaches past the run's {} weight updates: the learning rate never gets to its target",
        schedule->warmup_steps(), updates);
  }
  if (resumed) return;  // a resume may give a part of a schedule: resumed_optimizer_options checks the merged one
  try {
    check_schedule(*schedule);
  } catch (const ConfigError& e) {
    throw OptionError("learning_rate_schedule", e.what());
  }
}

}  // namespace torchfit
