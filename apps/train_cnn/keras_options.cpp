#include "keras_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <type_traits>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <torchfit/training/class_weight.h>
#include <torchfit/training/metrics.h>
#include "../common/cli.h"

namespace train_cnn {
namespace {

namespace apps = torchfit::apps;

// Comma-separated items, spaces around each trimmed; `strict`: an empty item is an error naming `flag`.
std::vector<std::string> split(const std::string& text, const std::string& flag = "", bool strict = false) {
  std::vector<std::string> out;
  std::stringstream in(text + ",");
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty() && strict) throw apps::UsageError(flag + ": an empty item in '" + text + "'");
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// --lr-boundaries: whole numbers >= 1, strictly increasing, within int64; --lr-values: finite numbers.
template <typename T>
std::vector<T> numbers(const std::string& flag, const std::string& text) {
  std::vector<T> out;
  for (const auto& item : split(text, flag, !text.empty())) {
    size_t used = 0;
    T v{};
    try {
      if constexpr (std::is_integral_v<T>)
        v = std::stoll(item, &used, 10);
      else
        v = std::stod(item, &used);
    } catch (const std::out_of_range&) {
      throw apps::UsageError(flag + ": '" + item + "' is out of range");
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !std::isfinite(static_cast<double>(v))) {
      throw apps::UsageError(flag + ": '" + item + "' is not a " +
                             (std::is_integral_v<T> ? "whole number" : "finite number"));
    }
    if (std::is_integral_v<T> && v < 1) throw apps::UsageError(flag + ": '" + item + "' is below 1");
    if (std::is_integral_v<T> && !out.empty() && v <= out.back()) {
      throw apps::UsageError(flag + ": " + item + " does not increase (boundaries must be strictly increasing)");
    }
    out.push_back(v);
  }
  return out;
}

std::optional<torchfit::LearningRateScheduleOptions> schedule(const Args& a, int64_t updates) {
  if (a.lr_schedule.empty()) return std::nullopt;
  torchfit::LearningRateScheduleOptions s;
  s.name(a.lr_schedule)
      .decay_steps(a.decay_steps > 0 ? a.decay_steps : std::max<int64_t>(1, updates - a.lr_warmup_steps))
      .decay_rate(a.decay_rate)
      .alpha(a.alpha)
      .boundaries(numbers<int64_t>("--lr-boundaries", a.lr_boundaries))
      .values(numbers<double>("--lr-values", a.lr_values));
  if (a.lr_warmup_steps > 0) s.initial_learning_rate(0.0).warmup_target(a.lr).warmup_steps(a.lr_warmup_steps);
  return s;
}

// Sets `*value` from the saved `saved` unless `flag` was given; a given flag that differs is logged.
template <typename T>
void restore(const Args& a, const std::string& flag, T* value, const T& saved) {
  if (!a.given.count(flag)) {
    *value = saved;
  } else if (*value != saved) {
    torchfit::logger().info("{}: {} replaces the checkpoint's {}", flag, nlohmann::json(*value).dump(),
                            nlohmann::json(saved).dump());
  }
}

double off_or(const nlohmann::json& v) { return v.is_number() ? v.get<double>() : 0.0; }

std::string joined(const nlohmann::json& list) {
  std::string out;
  for (const auto& v : list) out += (out.empty() ? "" : ",") + v.dump();
  return out;
}

void restore_schedule(Args& a, const nlohmann::json& lr) {
  const std::string cls = lr.is_object() ? lr.value("class_name", "") : "";
  const std::string name = cls == "CosineDecay"              ? "cosine"
                           : cls == "ExponentialDecay"       ? "exponential"
                           : cls == "PiecewiseConstantDecay" ? "piecewise"
                                                             : "";
  restore(a, "--lr-schedule", &a.lr_schedule, name);
  if (name.empty() || a.lr_schedule != name) return;
  const auto& c = lr["config"];
  if (name == "piecewise") {
    restore(a, "--lr-boundaries", &a.lr_boundaries, joined(c["boundaries"]));
    restore(a, "--lr-values", &a.lr_values, joined(c["values"]));
    return;
  }
  restore(a, "--decay-steps", &a.decay_steps, c["decay_steps"].get<int64_t>());
  const bool warm = !c.value("warmup_target", nlohmann::json()).is_null();
  if (!a.lr_given) a.lr = warm ? c["warmup_target"].get<double>() : c["initial_learning_rate"].get<double>();
  if (name == "exponential") {
    restore(a, "--decay-rate", &a.decay_rate, c["decay_rate"].get<double>());
    return;
  }
  restore(a, "--alpha", &a.alpha, c["alpha"].get<double>());
  restore(a, "--lr-warmup-steps", &a.lr_warmup_steps, warm ? c["warmup_steps"].get<int64_t>() : int64_t{0});
}

}  // namespace

void restore_optimizer_flags(Args& a, const nlohmann::json& state) {
  const nlohmann::json c =
      state.is_object() ? state.value("config", nlohmann::json::object()) : nlohmann::json::object();
  restore(a, "--clipnorm", &a.clipnorm, off_or(c.value("clipnorm", nlohmann::json())));
  restore(a, "--clipvalue", &a.clipvalue, off_or(c.value("clipvalue", nlohmann::json())));
  restore(a, "--global-clipnorm", &a.global_clipnorm, off_or(c.value("global_clipnorm", nlohmann::json())));
  restore(a, "--weight-decay", &a.weight_decay, off_or(c.value("weight_decay", nlohmann::json())));
  restore(a, "--ema", &a.ema, c.value("use_ema", false));
  if (a.ema) restore(a, "--ema-momentum", &a.ema_momentum, c.value("ema_momentum", 0.99));
  const int64_t saved_steps = static_cast<int64_t>(off_or(c.value("gradient_accumulation_steps", nlohmann::json())));
  const int64_t accumulated = state.is_object() ? state.value("accumulated", int64_t{0}) : 0;
  if (a.given.count("--gradient-accumulation-steps") && a.gradient_accumulation_steps != saved_steps &&
      accumulated > 0) {
    throw apps::UsageError("--gradient-accumulation-steps " + std::to_string(a.gradient_accumulation_steps) +
                           ": the checkpoint is in the middle of an accumulation of " + std::to_string(saved_steps) +
                           " batches (" + std::to_string(accumulated) + " done); resume with the saved value");
  }
  restore(a, "--gradient-accumulation-steps", &a.gradient_accumulation_steps, saved_steps);
  restore_schedule(a, c.value("learning_rate", nlohmann::json()));
}

void check_schedule_flags(const Args& a) {
  // The flags each schedule reads (Keras: CosineDecay, ExponentialDecay, PiecewiseConstantDecay).
  const std::map<std::string, std::set<std::string>> reads = {
      {"cosine", {"--lr-warmup-steps", "--decay-steps", "--alpha"}},
      {"exponential", {"--decay-steps", "--decay-rate"}},
      {"piecewise", {"--lr-boundaries", "--lr-values"}}};
  for (const std::string flag :
       {"--lr-warmup-steps", "--decay-steps", "--decay-rate", "--alpha", "--lr-boundaries", "--lr-values"}) {
    if (a.given.count(flag) && !a.lr_schedule.empty() && !reads.at(a.lr_schedule).count(flag)) {
      throw apps::UsageError(
          flag + ": --lr-schedule " + a.lr_schedule + " has no such setting (" +
          (flag == "--lr-warmup-steps" ? "only cosine has a warm-up" : "it belongs to another schedule") + ")");
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
        "--lr-warmup-steps {} reaches past the run's {} weight updates: the learning rate "
        "never gets to --lr",
        a.lr_warmup_steps, updates);
  }
  const auto boundaries = numbers<int64_t>("--lr-boundaries", a.lr_boundaries);
  const auto values = numbers<double>("--lr-values", a.lr_values);
  if (a.lr_schedule == "piecewise" && values.size() != boundaries.size() + 1) {
    throw apps::UsageError("--lr-values: " + std::to_string(values.size()) + " values for " +
                           std::to_string(boundaries.size()) +
                           " --lr-boundaries (needs one more value than boundaries)");
  }
}

void check_metrics_flag(const Args& a) {
  std::set<std::string> seen;
  for (const auto& name : split(a.metrics, "--metrics", true)) {
    if (!seen.insert(name).second) throw apps::UsageError("--metrics: '" + name + "' is named twice");
    try {
      torchfit::MetricSet({name}, "categorical_crossentropy", false, 2);
    } catch (const torchfit::ConfigError& e) {
      throw apps::UsageError(std::string("--metrics: ") + e.what());
    }
  }
}

torchfit::CompileOptions compile_options(const Args& a, int64_t updates) {
  const auto optimizer = torchfit::OptimizerOptions()
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
  const auto metrics = split(a.metrics);
  return torchfit::CompileOptions().loss("categorical_crossentropy").optimizer(optimizer).metrics(metrics);
}

std::map<int64_t, double> class_weight(const Args& a, const torchfit::data::DirectoryIterator& train) {
  if (!a.given.count("--class-weight")) return {};
  std::string lower = a.class_weight;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (a.class_weight.empty() ||
      (a.class_weight != "balanced" && lower == "balanced" && !std::filesystem::exists(a.class_weight))) {
    throw apps::UsageError("--class-weight: '" + a.class_weight + "' is neither balanced (lower case) nor a JSON file");
  }
  try {
    if (a.class_weight == "balanced") return torchfit::balanced_class_weight(train.classes(), train.num_classes());
    return torchfit::read_class_weight(a.class_weight, train.class_indices());
  } catch (const torchfit::ConfigError& e) {
    throw apps::UsageError(std::string("--class-weight: ") + e.what());
  }
}

}  // namespace train_cnn
