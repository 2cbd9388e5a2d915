// The registry of a user's losses and metrics (custom_objects.h): names checked against Keras's
// catalogue, guarded by one mutex (registration may happen on any thread; lookups copy nothing).
#include <torchfit/training/custom_objects.h>

#include <algorithm>
#include <map>
#include <mutex>

#include <torchfit/error.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>

namespace torchfit {
namespace {

struct MetricEntry {
  MetricFactory factory;
  std::string default_name;
};

struct Registry {
  std::mutex mutex;
  // std::map nodes never move: the pointers lookups hand out stay valid as others register.
  std::map<std::string, LossFunction> losses;
  std::map<std::string, MetricEntry> metrics;
};

Registry& registry() {
  static Registry r;
  return r;
}

// The names of one of the registry's maps, sorted (std::map's order).
template <typename Map>
std::vector<std::string> names_of(Map Registry::*map) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto& entry : r.*map) names.push_back(entry.first);
  return names;
}

void check_name(const std::string& kind, const std::string& name, const std::vector<std::string>& keras, bool taken) {
  if (name.empty()) throw ConfigError("register_" + kind + ": the class name is empty");
  if (std::find(keras.begin(), keras.end(), name) != keras.end()) {
    throw ConfigError("register_" + kind + ": '" + name + "' is a Keras " + kind + " of torchfit's catalogue already");
  }
  if (taken) throw ConfigError("register_" + kind + ": '" + name + "' is registered already");
}

}  // namespace

void register_loss(const std::string& class_name, LossFunction function) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  check_name("loss", class_name, loss_names(), r.losses.count(class_name) > 0);
  if (!function) throw ConfigError("register_loss: the function of '" + class_name + "' is empty");
  r.losses.emplace(class_name, std::move(function));
}

void register_metric(const std::string& class_name, MetricFactory factory, const std::string& default_name) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  check_name("metric", class_name, metric_names(), r.metrics.count(class_name) > 0);
  if (!factory) throw ConfigError("register_metric: the factory of '" + class_name + "' is empty");
  r.metrics.emplace(class_name, MetricEntry{std::move(factory), default_name.empty() ? class_name : default_name});
}

namespace detail {

const LossFunction* registered_loss(const std::string& class_name) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.losses.find(class_name);
  return it == r.losses.end() ? nullptr : &it->second;
}

const MetricFactory* registered_metric(const std::string& class_name, std::string* default_name) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.metrics.find(class_name);
  if (it == r.metrics.end()) return nullptr;
  if (default_name) *default_name = it->second.default_name;
  return &it->second.factory;
}

std::vector<std::string> registered_loss_names() { return names_of(&Registry::losses); }

std::vector<std::string> registered_metric_names() { return names_of(&Registry::metrics); }

}  // namespace detail
}  // namespace torchfit
