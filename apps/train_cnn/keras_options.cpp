#include "keras_options.h"

#include <algorithm>
#include <set>

#include <torchfit/error.h>

#include <torchfit/training/class_weight.h>
#include <torchfit/training/optimizer_overrides.h>
#include <torchfit/training/optimizers.h>
#include "../common/cli.h"

namespace train_cnn {
namespace {

namespace apps = torchfit::apps;

// The schedule of the flags from `lr`; decay_steps 0 with `updates` 0 (a resume: the library's default).
std::optional<torchfit::LearningRateScheduleOptions> schedule(const Args& a, int64_t updates, double lr) {
  if (a.lr_schedule.empty()) return std::nullopt;
  torchfit::LearningRateScheduleOptions s = a.schedule;  // --decay-steps, --decay-rate, --alpha, --lr-warmup-steps
  s.name(a.lr_schedule)
      .boundaries(apps::number_list<int64_t>("--lr-boundaries", a.lr_boundaries))
      .values(apps::number_list<double>("--lr-values", a.lr_values));
  if (s.decay_steps() == 0 && updates > 0) s.decay_steps(std::max<int64_t>(1, updates - s.warmup_steps()));
  if (s.warmup_steps() > 0) s.initial_learning_rate(0.0).warmup_target(lr);
  return s;
}

// The settings of --optimizer that the optimizer flags replace when given.
void apply_feature_flags(const Args& a, torchfit::OptimizerOptions& o) {
  const auto given = [&](const char* flag) { return a.given.count(flag) > 0; };
  const auto& f = a.optimizer;
  if (given("--clipnorm")) o.clipnorm(f.clipnorm());
  if (given("--clipvalue")) o.clipvalue(f.clipvalue());
  if (given("--global-clipnorm")) o.global_clipnorm(f.global_clipnorm());
  if (given("--weight-decay")) o.weight_decay(f.weight_decay());
  if (given("--ema")) o.use_ema(f.use_ema());
  if (given("--ema-momentum")) o.ema_momentum(f.ema_momentum());
  if (given("--gradient-accumulation-steps")) o.gradient_accumulation_steps(f.gradient_accumulation_steps());
}

// --optimizer (a name or Keras JSON, checked at parse) with the optimizer flags given on top: --lr, else the
// JSON's rate, else the optimizer's Keras default; --lr-schedule, else the JSON's schedule.
torchfit::OptimizerOptions flag_options(const Args& a, int64_t updates) {
  torchfit::OptimizerOptions o = torchfit::OptimizerOptions::from_keras(nlohmann::json(a.optimizer_spec));
  if (a.given.count("--lr")) o.learning_rate(a.optimizer.learning_rate());
  o.learning_rate(torchfit::resolved_learning_rate(o));
  apply_feature_flags(a, o);
  if (!a.lr_schedule.empty()) o.learning_rate_schedule(schedule(a, updates, o.learning_rate()));
  return o;
}

// Each flag and the Keras argument it sets (what a resumed run changes, OptimizerOverrides).
const std::map<std::string, std::string> kOptimizerFlags = {
    {"--clipnorm", "clipnorm"},
    {"--clipvalue", "clipvalue"},
    {"--global-clipnorm", "global_clipnorm"},
    {"--weight-decay", "weight_decay"},
    {"--ema", "use_ema"},
    {"--ema-momentum", "ema_momentum"},
    {"--gradient-accumulation-steps", "gradient_accumulation_steps"}};
const std::map<std::string, std::string> kScheduleFlags = {{"--decay-steps", "decay_steps"},
                                                           {"--alpha", "alpha"},
                                                           {"--decay-rate", "decay_rate"},
                                                           {"--lr-boundaries", "boundaries"},
                                                           {"--lr-values", "values"},
                                                           {"--lr-warmup-steps", "warmup_steps"},
                                                           {"--lr-schedule", "learning_rate_schedule"},
                                                           {"--lr", "learning_rate"}};

// The flag of a Keras argument (the schedule's name with --lr-schedule: "--lr-schedule cosine").
std::string flag_of(const Args& a, const std::string& arg) {
  if (arg == "learning_rate_schedule") return "--lr-schedule " + a.lr_schedule;
  for (const auto* table : {&kOptimizerFlags, &kScheduleFlags})
    for (const auto& [flag, name] : *table)
      if (name == arg) return flag;
  return arg;
}

int64_t run_batches(const Args& a) { return static_cast<int64_t>(a.epochs) * a.steps_per_epoch; }

}  // namespace

torchfit::OptimizerOptions optimizer_options(const Args& a, const torchfit::saving::CheckpointInfo* resumed) {
  const int64_t batches = run_batches(a);
  if (!resumed) {
    const int64_t accumulation = flag_options(a, 0).gradient_accumulation_steps();
    return flag_options(a, batches / std::max<int64_t>(1, accumulation));
  }
  torchfit::OptimizerOverrides overrides;
  overrides.given = flag_options(a, 0);
  for (const auto& [flag, arg] : kOptimizerFlags)
    if (a.given.count(flag)) overrides.args.insert(arg);
  if (a.given.count("--lr")) overrides.learning_rate = a.optimizer.learning_rate();
  if (a.given.count("--lr-schedule")) overrides.schedule = overrides.given.learning_rate_schedule();
  for (const auto& [flag, arg] : kScheduleFlags)
    if (a.given.count(flag)) overrides.schedule_args.insert(arg);
  overrides.batches = batches;
  if (a.given.count("--optimizer")) overrides.update_rule = torchfit::OptimizerOptions::from_keras(a.optimizer_spec);
  try {
    return torchfit::resumed_optimizer_options(*resumed, overrides);
  } catch (const torchfit::OptionError& e) {
    throw apps::UsageError(flag_of(a, e.option()) + " with --resume '" + a.resume + "': " + e.what());
  } catch (const torchfit::ConfigError& e) {
    throw torchfit::ConfigError("--resume '" + a.resume + "': " + e.what());
  }
}

void check_optimizer_flags(const Args& a) {
  std::set<std::string> schedule_args;  // each schedule flag given (--lr: the schedule's rate)
  for (const auto& [flag, arg] : kScheduleFlags)
    if (a.given.count(flag) && flag != "--lr-schedule") schedule_args.insert(arg);
  try {
    torchfit::check_run_optimizer(flag_options(a, 1), schedule_args, run_batches(a), !a.resume.empty());
  } catch (const torchfit::OptionError& e) {
    throw apps::UsageError(flag_of(a, e.option()) + ": " + e.what());
  }
}

torchfit::CompileOptions compile_options(const Args& a, const torchfit::OptimizerOptions& optimizer) {
  const auto metrics = apps::comma_items(a.metrics);
  return torchfit::CompileOptions().loss(a.loss).optimizer(optimizer).metrics(metrics);
}

std::map<int64_t, double> class_weight(const Args& a, const std::vector<int64_t>& classes,
                                       const std::map<std::string, int64_t>& class_indices) {
  if (!a.given.count("--class-weight")) return {};
  try {
    return torchfit::class_weight_from_spec(a.class_weight, classes, class_indices);
  } catch (const torchfit::ConfigError& e) {
    throw apps::UsageError(std::string("--class-weight: ") + e.what());
  }
}

}  // namespace train_cnn
