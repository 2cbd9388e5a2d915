#include <torchfit/model/compile.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <type_traits>

#include <torchfit/error.h>
#include <torchfit/layers/layer_args.h>

namespace torchfit {
namespace {

// Keras's class names of the schedules (keras.optimizers.schedules) and torchfit's names for them.
const std::map<std::string, std::string>& schedule_classes() {
  static const std::map<std::string, std::string> classes = {{"cosine", "CosineDecay"},
                                                             {"exponential", "ExponentialDecay"},
                                                             {"piecewise", "PiecewiseConstantDecay"},
                                                             {"cosine_restarts", "CosineDecayRestarts"},
                                                             {"inverse_time", "InverseTimeDecay"},
                                                             {"polynomial", "PolynomialDecay"}};
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
  OptimizerOptions resolved = o.resolved();
  nlohmann::json c = nlohmann::json::object();
  OptimizerArgWriter writer(c);
  resolved.learning_rate_schedule(std::nullopt).args(writer);
  for (const char* key : {"clipnorm", "clipvalue", "global_clipnorm", "weight_decay", "use_ema", "ema_momentum",
                          "gradient_accumulation_steps"})
    c.erase(key);
  c["learning_rate"] = learning_rate;
  return c;
}

const std::vector<std::string>& OptimizerOptions::known_names() {
  static const std::vector<std::string> names = {"adam",   "adamw", "sgd",  "rmsprop", "adagrad",  "adadelta",
                                                 "adamax", "nadam", "lion", "ftrl",    "adafactor"};
  return names;
}

OptimizerOptions OptimizerOptions::resolved() const {
  const auto& known = known_names();
  if (std::find(known.begin(), known.end(), name()) == known.end()) {
    std::string list;
    for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError("unknown optimizer '" + name() + "' (known: " + list + ")");
  }
  OptimizerOptions r = *this;
  if (r.learning_rate() < 0) r.learning_rate(name() == "sgd" ? 1e-2 : 1e-3);
  if (r.beta_2() == kKerasDefault) r.beta_2(name() == "lion" ? 0.99 : 0.999);
  if (r.rho() == kKerasDefault) r.rho(name() == "adadelta" ? 0.95 : 0.9);
  if (r.weight_decay() == kKerasDefault) r.weight_decay(name() == "adamw" ? 0.004 : 0.0);
  return r;
}

void OptimizerArgWriter::operator()(const char* key, const std::optional<LearningRateScheduleOptions>& schedule) {
  if (!schedule) return;
  const auto it = schedule_classes().find(schedule->name());
  if (it == schedule_classes().end()) {
    throw ConfigError("learning-rate schedule: unknown name '" + schedule->name() +
                      "' (known: cosine, cosine_restarts, exponential, inverse_time, piecewise, polynomial)");
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

namespace {

// The argument names args() shows for the optimizer `name`.
struct ArgumentNames {
  std::set<std::string> names;
  template <typename T>
  void operator()(const char* key, T&) {
    names.insert(key);
  }
  template <typename T>
  void off_when_zero(const char* key, T&) {
    names.insert(key);
  }
};

// `config` without what the named optimizer does not read but old configs and Keras write harmlessly:
// the update-rule settings torchfit wrote for every optimizer, at the values it wrote, and Keras's
// BaseOptimizer arguments torchfit has no use for, when null.
nlohmann::json without_unused_keys(nlohmann::json config) {
  if (!config.is_object() || !config.contains("name") || !config["name"].is_string()) return config;
  OptimizerOptions named;
  named.name(config["name"].get<std::string>());
  ArgumentNames reads;
  named.args(reads);
  const nlohmann::json legacy = {{"beta_1", 0.9},   {"beta_2", 0.999},   {"epsilon", 1e-7},
                                 {"momentum", 0.0}, {"nesterov", false}, {"rho", 0.9}};
  for (const auto& [key, value] : legacy.items())
    if (!reads.names.count(key) && config.contains(key) && config[key] == value) config.erase(key);
  for (const char* key : {"jit_compile", "is_legacy_optimizer"})  // tf.keras 2.11+: no effect here
    if (config.contains(key) && config[key].is_boolean()) config.erase(key);
  if (config.contains("decay")) {  // tf.keras <= 2.10: lr / (1 + decay * iterations)
    if (!(config["decay"].is_number() && config["decay"].get<double>() == 0)) {
      throw ConfigError("optimizer config: Keras 2's 'decay' " + config["decay"].dump() +
                        " is not supported (use an InverseTimeDecay schedule as learning_rate)");
    }
    config.erase("decay");
  }
  for (const char* key : {"ema_overwrite_frequency", "loss_scale_factor"}) {
    if (!config.contains(key)) continue;
    if (!config[key].is_null()) {
      throw ConfigError(std::string("optimizer config: '") + key + "' is not supported (got " + config[key].dump() +
                        ")");
    }
    config.erase(key);
  }
  return config;
}

}  // namespace

OptimizerOptions OptimizerOptions::from_config(const nlohmann::json& config) {
  OptimizerOptions o;
  const nlohmann::json used = without_unused_keys(config);
  OptimizerArgReader reader(used, "optimizer config");
  o.args(reader);
  reader.finish();
  return o;
}

OptimizerOptions OptimizerOptions::from_keras(const nlohmann::json& given) {
  nlohmann::json spec = given;
  if (spec.is_string()) {
    const std::string text = spec.get<std::string>();
    if (!text.empty() && text.front() == '{') {
      try {
        spec = nlohmann::json::parse(text);
      } catch (const nlohmann::json::parse_error& e) {
        throw ConfigError("optimizer: not valid JSON: " + text + " (" + e.what() + ")");
      }
    }
  }
  std::string class_name;
  nlohmann::json config = nlohmann::json::object();
  if (spec.is_string()) {
    class_name = spec.get<std::string>();
  } else if (spec.is_object() && spec.contains("class_name") && spec["class_name"].is_string()) {
    class_name = spec["class_name"].get<std::string>();
    if (spec.contains("config")) config = spec["config"];
  } else {
    throw ConfigError("optimizer: expected a name or {\"class_name\": …, \"config\": {…}}, got " + spec.dump());
  }
  std::string name;
  for (const char c : class_name) name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!config.is_object()) throw ConfigError("optimizer " + class_name + ": config must be a JSON object");
  config["name"] = name;  // Keras's is the instance's name ("adam", "my_optimizer")
  OptimizerOptions o = from_config(config);
  o.resolved();  // an unknown name
  return o;
}

}  // namespace torchfit
