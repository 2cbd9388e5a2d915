#include "keras_options.h"

#include <algorithm>
#include <set>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <torchfit/training/class_weight.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/optimizer_overrides.h>
#include "../common/cli.h"

namespace train_cnn {
namespace {

namespace apps = torchfit::apps;

// The schedule of the flags; decay_steps 0 with `updates` 0 (a resume: the library's default).
std::optional<torchfit::LearningRateScheduleOptions> schedule(const Args& a, int64_t updates) {
  if (a.lr_schedule.empty()) return std::nullopt;
  torchfit::LearningRateScheduleOptions s;
  const int64_t decay_steps = updates > 0 ? std::max<int64_t>(1, updates - a.lr_warmup_steps) : 0;
  s.name(a.lr_schedule)
      .decay_steps(a.decay_steps > 0 ? a.decay_steps : decay_steps)
      .decay_rate(a.decay_rate)
      .alpha(a.alpha)
      .boundaries(apps::number_list<int64_t>("--lr-boundaries", a.lr_boundaries))
      .values(apps::number_list<double>("--lr-values", a.lr_values));
  if (a.lr_warmup_steps > 0) s.initial_learning_rate(0.0).warmup_target(a.lr).warmup_steps(a.lr_warmup_steps);
  return s;
}

torchfit::OptimizerOptions flag_options(const Args& a, int64_t updates) {
  return torchfit::OptimizerOptions()
      .name("adam")
      .learning_rate(a.lr)
      .clipnorm(a.clipnorm)
      .clipvalue(a.clipvalue)
      .global_clipnorm(a.global_clipnorm)
      .weight_decay(a.weight_decay)
      .use_ema(a.ema)
      .ema_momentum(a.ema_momentum)
      .gradient_accumulation_steps(a.gradient_accumulation_steps)
      .learning_rate_schedule(schedule(a, updates));
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

std::string flag_of(const std::string& arg) {
  for (const auto* table : {&kOptimizerFlags, &kScheduleFlags})
    for (const auto& [flag, name] : *table)
      if (name == arg) return flag;
  return arg;
}

}  // namespace

torchfit::OptimizerOptions optimizer_options(const Args& a, const torchfit::saving::CheckpointInfo* resumed) {
  const int64_t batches = static_cast<int64_t>(a.epochs) * a.steps_per_epoch;
  if (!resumed) return flag_options(a, batches / std::max<int64_t>(1, a.gradient_accumulation_steps));
  torchfit::OptimizerOverrides overrides;
  overrides.given = flag_options(a, 0);
  for (const auto& [flag, arg] : kOptimizerFlags)
    if (a.given.count(flag)) overrides.args.insert(arg);
  if (a.given.count("--lr")) overrides.learning_rate = a.lr;
  if (a.given.count("--lr-schedule")) overrides.schedule = overrides.given.learning_rate_schedule();
  for (const auto& [flag, arg] : kScheduleFlags)
    if (a.given.count(flag)) overrides.schedule_args.insert(arg);
  overrides.batches = batches;
  try {
    return torchfit::resumed_optimizer_options(*resumed, overrides);
  } catch (const torchfit::OptionError& e) {
    const std::string flag = flag_of(e.option()) + (e.option() == "learning_rate_schedule" ? " " + a.lr_schedule : "");
    throw apps::UsageError(flag + " with --resume '" + a.resume + "': " + e.what());
  } catch (const torchfit::ConfigError& e) {
    throw torchfit::ConfigError("--resume '" + a.resume + "': " + e.what());
  }
}

void check_schedule_flags(const Args& a) {
  if (!a.lr_schedule.empty()) {  // each flag given is an argument of that schedule (--lr: its rate)
    const auto reads = torchfit::schedule_arguments(a.lr_schedule);
    for (const auto& [flag, arg] : kScheduleFlags) {
      if (!a.given.count(flag) || flag == "--lr-schedule" ||
          reads.count(arg == "learning_rate" ? "initial_learning_rate" : arg))
        continue;
      throw apps::UsageError(flag + ": --lr-schedule " + a.lr_schedule + " has no such setting (" +
                             (flag == "--lr"                ? "its rates are --lr-values"
                              : flag == "--lr-warmup-steps" ? "only cosine has a warm-up"
                                                            : "it belongs to another schedule") +
                             ")");
    }
  }
  const int64_t batches = static_cast<int64_t>(a.epochs) * a.steps_per_epoch;
  if (a.gradient_accumulation_steps > batches) {
    throw apps::UsageError("--gradient-accumulation-steps " + std::to_string(a.gradient_accumulation_steps) +
                           " is more than the run's " + std::to_string(batches) +
                           " batches (--epochs x --steps-per-epoch): the weights would never be updated");
  }
  const int64_t updates = batches / std::max<int64_t>(1, a.gradient_accumulation_steps);
  if (a.lr_warmup_steps > 0 && a.lr_warmup_steps >= updates) {
    torchfit::logger().warn(
        "--lr-warmup-steps {} reaches past the run's {} weight updates: the learning rate never gets to --lr",
        a.lr_warmup_steps, updates);
  }
  // A resume may give a part of a schedule (the rest is the checkpoint's): the merged schedule is checked then.
  const auto fresh = schedule(a, 1);
  try {
    if (fresh && a.resume.empty()) torchfit::check_schedule(*fresh);
  } catch (const torchfit::ConfigError& e) {
    throw apps::UsageError("--lr-schedule " + a.lr_schedule + ": " + e.what());
  }
}

void check_metrics_flag(const Args& a) {
  try {
    torchfit::MetricSet(apps::comma_items(a.metrics, "--metrics", true), "categorical_crossentropy", false, 2);
  } catch (const torchfit::ConfigError& e) {
    throw apps::UsageError(std::string("--metrics: ") + e.what());
  }
}

torchfit::CompileOptions compile_options(const Args& a, const torchfit::OptimizerOptions& optimizer) {
  const auto metrics = apps::comma_items(a.metrics);
  return torchfit::CompileOptions().loss("categorical_crossentropy").optimizer(optimizer).metrics(metrics);
}

std::map<int64_t, double> class_weight(const Args& a, const torchfit::data::DirectoryIterator& train) {
  if (!a.given.count("--class-weight")) return {};
  try {
    return torchfit::class_weight_from_spec(a.class_weight, train.classes(), train.class_indices());
  } catch (const torchfit::ConfigError& e) {
    throw apps::UsageError(std::string("--class-weight: ") + e.what());
  }
}

}  // namespace train_cnn
