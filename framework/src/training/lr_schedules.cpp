#include <torchfit/training/lr_schedules.h>

#include <algorithm>
#include <cmath>

#include <torchfit/error.h>

namespace torchfit {
namespace {

constexpr double kPi = 3.14159265358979323846;

double cosine_decay(double step, double decay_steps, double from, double alpha) {
  const double cosine = 0.5 * (1.0 + std::cos(kPi * step / decay_steps));
  return from * ((1.0 - alpha) * cosine + alpha);
}

double cosine(const LearningRateScheduleOptions& s, double lr0, int64_t step) {
  const auto decay = static_cast<double>(s.decay_steps());
  if (!s.warmup_target()) return cosine_decay(std::min(static_cast<double>(step), decay), decay, lr0, s.alpha());
  const auto warmup = static_cast<double>(s.warmup_steps());
  const double at = std::min(static_cast<double>(step), warmup + decay);
  if (at < warmup) return lr0 + (*s.warmup_target() - lr0) * at / warmup;
  return cosine_decay(at - warmup, decay, *s.warmup_target(), s.alpha());
}

// CosineDecayRestarts: the restart i and the fraction of period i done at `fraction` = step / first period.
double cosine_restarts(const LearningRateScheduleOptions& s, double lr0, int64_t step) {
  double fraction = static_cast<double>(step) / static_cast<double>(s.first_decay_steps());
  double i_restart = 0;
  if (s.t_mul() == 1.0) {
    i_restart = std::floor(fraction);
    fraction -= i_restart;
  } else {
    i_restart = std::floor(std::log(1.0 - fraction * (1.0 - s.t_mul())) / std::log(s.t_mul()));
    const double sum_r = (1.0 - std::pow(s.t_mul(), i_restart)) / (1.0 - s.t_mul());
    fraction = (fraction - sum_r) / std::pow(s.t_mul(), i_restart);
  }
  const double cosine = 0.5 * std::pow(s.m_mul(), i_restart) * (1.0 + std::cos(kPi * fraction));
  return lr0 * ((1 - s.alpha()) * cosine + s.alpha());
}

double polynomial(const LearningRateScheduleOptions& s, double lr0, int64_t step) {
  auto at = static_cast<double>(step);
  auto decay = static_cast<double>(s.decay_steps());
  if (s.cycle()) {
    decay *= step == 0 ? 1.0 : std::ceil(at / decay);
  } else {
    at = std::min(at, decay);
  }
  return (lr0 - s.end_learning_rate()) * std::pow(1 - at / decay, s.power()) + s.end_learning_rate();
}

double exponent(const LearningRateScheduleOptions& s, int64_t step) {
  const double p = static_cast<double>(step) / static_cast<double>(s.decay_steps());
  return s.staircase() ? std::floor(p) : p;
}

void check_finite_at_least(const std::string& what, const char* key, double v, double lo) {
  if (!(std::isfinite(v) && v >= lo)) {
    throw ConfigError(what + key + " must be a finite number >= " + std::to_string(lo) + ", got " + std::to_string(v));
  }
}

void check_new_schedules(const LearningRateScheduleOptions& s, const std::string& what) {
  if (s.name() == "cosine_restarts") {
    if (s.first_decay_steps() < 1) {
      throw ConfigError(what + "first_decay_steps must be >= 1, got " + std::to_string(s.first_decay_steps()));
    }
    if (!(std::isfinite(s.t_mul()) && s.t_mul() > 0)) throw ConfigError(what + "t_mul must be > 0");
    check_finite_at_least(what, "m_mul", s.m_mul(), 0);
  }
  if (s.name() == "polynomial") {
    check_finite_at_least(what, "end_learning_rate", s.end_learning_rate(), 0);
    if (!std::isfinite(s.power())) throw ConfigError(what + "power must be finite");
  }
  if (s.name() == "inverse_time") check_finite_at_least(what, "decay_rate", s.decay_rate(), 0);
}

}  // namespace

void check_schedule(const LearningRateScheduleOptions& s) {
  const std::string what = "learning-rate schedule '" + s.name() + "': ";
  static const std::set<std::string> known = {"cosine",       "cosine_restarts", "exponential",
                                              "inverse_time", "piecewise",       "polynomial"};
  if (!known.count(s.name())) {
    throw ConfigError("unknown learning-rate schedule '" + s.name() +
                      "' (known: cosine, cosine_restarts, exponential, inverse_time, piecewise, polynomial)");
  }
  check_new_schedules(s, what);
  if (s.name() != "piecewise" && s.name() != "cosine_restarts" && s.decay_steps() < 1) {
    throw ConfigError(what + "decay_steps must be >= 1, got " + std::to_string(s.decay_steps()));
  }
  if (s.warmup_steps() < 0) throw ConfigError(what + "warmup_steps must be >= 0");
  if (s.warmup_steps() > 0 && !s.warmup_target()) throw ConfigError(what + "warmup_steps needs a warmup_target");
  if (s.initial_learning_rate() && !(std::isfinite(*s.initial_learning_rate()) && *s.initial_learning_rate() >= 0)) {
    throw ConfigError(what + "initial_learning_rate must be a finite number >= 0");
  }
  if (!(s.alpha() >= 0 && s.alpha() <= 1)) throw ConfigError(what + "alpha must be in [0, 1]");
  if (s.warmup_target() && !(std::isfinite(*s.warmup_target()) && *s.warmup_target() >= 0)) {
    throw ConfigError(what + "warmup_target must be a finite number >= 0");
  }
  if (s.name() == "exponential" && !(s.decay_rate() > 0 && std::isfinite(s.decay_rate()))) {
    throw ConfigError(what + "decay_rate must be > 0, got " + std::to_string(s.decay_rate()));
  }
  if (s.name() == "piecewise") {
    if (s.values().size() != s.boundaries().size() + 1 || s.boundaries().empty()) {
      throw ConfigError(what + "needs one more value than boundaries (got " + std::to_string(s.boundaries().size()) +
                        " boundaries, " + std::to_string(s.values().size()) + " values)");
    }
    if (!std::is_sorted(s.boundaries().begin(), s.boundaries().end()) ||
        std::adjacent_find(s.boundaries().begin(), s.boundaries().end()) != s.boundaries().end()) {
      throw ConfigError(what + "boundaries must increase");
    }
    for (const double v : s.values())
      if (!(std::isfinite(v) && v >= 0)) throw ConfigError(what + "values must be finite rates >= 0");
  }
}

namespace {

// The argument names an args() visitor is shown.
struct ArgumentNames {
  std::set<std::string> names;
  template <typename T>
  void operator()(const char* key, T&) {
    names.insert(key);
  }
  template <typename T>
  void required(const char* key, T&) {
    names.insert(key);
  }
};

}  // namespace

std::set<std::string> schedule_arguments(const std::string& name) {
  LearningRateScheduleOptions s;
  s.name(name);
  s.decay_steps(1).first_decay_steps(1).decay_rate(1.0).boundaries({1}).values({1.0, 1.0});
  check_schedule(s);  // an unknown name
  ArgumentNames collect;
  s.args(collect);
  return collect.names;
}

double schedule_learning_rate(const LearningRateScheduleOptions& s, double initial_learning_rate, int64_t step) {
  check_schedule(s);
  const double lr0 = s.initial_learning_rate().value_or(initial_learning_rate);
  if (s.name() == "cosine") return cosine(s, lr0, step);
  if (s.name() == "exponential") return lr0 * std::pow(s.decay_rate(), exponent(s, step));
  if (s.name() == "inverse_time") return lr0 / (1.0 + s.decay_rate() * exponent(s, step));
  if (s.name() == "cosine_restarts") return cosine_restarts(s, lr0, step);
  if (s.name() == "polynomial") return polynomial(s, lr0, step);
  size_t i = 0;
  while (i < s.boundaries().size() && step > s.boundaries()[i]) ++i;
  return s.values()[i];
}

nlohmann::json schedule_config(const LearningRateScheduleOptions& s, double initial_learning_rate) {
  LearningRateScheduleOptions resolved = s;
  resolved.initial_learning_rate(s.initial_learning_rate().value_or(initial_learning_rate));
  nlohmann::json c = nlohmann::json::object();
  OptimizerArgWriter writer(c);
  writer("learning_rate", std::optional<LearningRateScheduleOptions>(resolved));
  return c["learning_rate"];
}

}  // namespace torchfit
