#include <torchfit/model/compile.h>

#include <map>
#include <set>
#include <type_traits>

#include <torchfit/error.h>
#include <torchfit/layers/layer_args.h>

namespace torchfit {
namespace {

// Keras's class names of the schedules (keras.optimizers.schedules) and torchfit's names for them.
const std::map<std::string, std::string>& schedule_classes() {
  static const std::map<std::string, std::string> classes = {
      {"cosine", "CosineDecay"}, {"exponential", "ExponentialDecay"}, {"piecewise", "PiecewiseConstantDecay"}};
  return classes;
}

// The visitor that reads OptimizerOptions::args() / LearningRateScheduleOptions::args() from a config
// written by OptimizerArgWriter: an argument absent or null keeps its default (a required one must be
// there); finish() refuses fields no argument read. Errors name `who` and the field.
class OptimizerArgReader {
 public:
  OptimizerArgReader(const nlohmann::json& config, std::string who) : config_(config), who_(std::move(who)) {
    if (!config_.is_object()) throw ConfigError(who_ + ": must be a JSON object, got " + config_.dump());
  }
  template <typename T>
  void operator()(const char* key, T& field) {
    seen_.insert(key);
    if (config_.contains(key) && !config_[key].is_null()) read(key, field);
  }
  template <typename T>
  void required(const char* key, T& field) {
    if (!config_.contains(key) || config_[key].is_null()) throw ConfigError(who_ + ": missing field '" + key + "'");
    (*this)(key, field);
  }
  template <typename T>
  void off_when_zero(const char* key, T& field) {
    (*this)(key, field);
  }
  void finish() const {
    for (const auto& [key, value] : config_.items()) {
      if (seen_.count(key)) continue;
      std::string known;
      for (const auto& f : seen_) known += (known.empty() ? "" : ", ") + f;
      throw ConfigError(who_ + ": unknown field '" + key + "' (known: " + known + ")");
    }
  }

 private:
  // "learning_rate" holds the rate or the schedule: each visit takes its own kind and leaves the other.
  void read(const char* key, double& field) {
    if (std::string(key) == "learning_rate" && config_[key].is_object()) return;
    field = value<double>(key);
  }
  void read(const char* key, std::optional<LearningRateScheduleOptions>& field) {
    if (config_[key].is_object()) field = LearningRateScheduleOptions::from_config(config_[key]);
  }
  template <typename T>
  void read(const char* key, std::optional<T>& field) {
    field = value<T>(key);
  }
  template <typename T>
  void read(const char* key, T& field) {
    field = value<T>(key);
  }

  template <typename T>
  T value(const std::string& key) const {
    const auto& v = config_[key];
    const char* want = detail::json_type_mismatch<T>(v);
    if (want) throw ConfigError(who_ + ": field '" + key + "' must be " + want + ", got " + v.dump());
    return v.get<T>();
  }

  const nlohmann::json& config_;
  std::string who_;
  std::set<std::string> seen_;
};

}  // namespace

nlohmann::json optimizer_hyperparameters(const OptimizerOptions& o, double learning_rate) {
  return {
      {"name", o.name()},       {"learning_rate", learning_rate}, {"beta_1", o.beta_1()},     {"beta_2", o.beta_2()},
      {"epsilon", o.epsilon()}, {"momentum", o.momentum()},       {"nesterov", o.nesterov()}, {"rho", o.rho()}};
}

void OptimizerArgWriter::operator()(const char* key, const std::optional<LearningRateScheduleOptions>& schedule) {
  if (!schedule) return;
  const auto it = schedule_classes().find(schedule->name());
  if (it == schedule_classes().end()) {
    throw ConfigError("learning-rate schedule: unknown name '" + schedule->name() +
                      "' (known: cosine, exponential, piecewise)");
  }
  nlohmann::json config = nlohmann::json::object();
  OptimizerArgWriter writer(config);
  LearningRateScheduleOptions copy = *schedule;  // args() visits the fields non-const
  copy.args(writer);
  config_[key] = {{"class_name", it->second}, {"config", config}};
}

LearningRateScheduleOptions LearningRateScheduleOptions::from_config(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("class_name") || !spec["class_name"].is_string() ||
      !spec.contains("config")) {
    throw ConfigError("learning-rate schedule: expected {\"class_name\": …, \"config\": {…}}, got " + spec.dump());
  }
  const std::string class_name = spec["class_name"].get<std::string>();
  LearningRateScheduleOptions s;
  std::string known;
  for (const auto& [name, keras] : schedule_classes()) {
    if (keras == class_name) s.name(name);
    known += (known.empty() ? "" : ", ") + keras;
  }
  if (schedule_classes().at(s.name()) != class_name) {
    throw ConfigError("learning-rate schedule: unknown class '" + class_name + "' (known: " + known + ")");
  }
  OptimizerArgReader reader(spec["config"], "learning-rate schedule " + class_name);
  s.args(reader);
  std::string name;
  reader("name", name);  // Keras writes the schedule's name too
  reader.finish();
  return s;
}

OptimizerOptions OptimizerOptions::from_config(const nlohmann::json& config) {
  OptimizerOptions o;
  OptimizerArgReader reader(config, "optimizer config");
  o.args(reader);
  reader.finish();
  return o;
}

}  // namespace torchfit
