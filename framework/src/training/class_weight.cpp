#include <torchfit/training/class_weight.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>

namespace torchfit {

std::map<int64_t, double> balanced_class_weight(const std::vector<int64_t>& labels, int64_t num_classes) {
  std::vector<int64_t> count(static_cast<size_t>(std::max<int64_t>(num_classes, 0)), 0);
  for (const int64_t c : labels) {
    if (c < 0 || c >= num_classes) {
      throw ConfigError("class_weight balanced: class index " + std::to_string(c) + " outside [0, " +
                        std::to_string(num_classes) + ")");
    }
    ++count[static_cast<size_t>(c)];
  }
  std::map<int64_t, double> w;
  for (int64_t c = 0; c < num_classes; ++c) {
    if (count[static_cast<size_t>(c)] == 0) {
      throw ConfigError("class_weight balanced: class " + std::to_string(c) + " has no samples");
    }
    w[c] = static_cast<double>(labels.size()) /
           (static_cast<double>(num_classes) * static_cast<double>(count[static_cast<size_t>(c)]));
  }
  return w;
}

std::map<int64_t, double> read_class_weight(const std::string& path,
                                            const std::map<std::string, int64_t>& class_indices) {
  std::ifstream in(path);
  if (!in) throw ConfigError("class weights '" + path + "' cannot be read");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw ConfigError("class weights '" + path + "': not JSON: " + e.what());
  }
  if (!j.is_object()) throw ConfigError("class weights '" + path + "': expected an object {class: weight}");
  std::map<int64_t, double> w;
  for (const auto& [key, value] : j.items()) {
    int64_t index = -1;
    if (class_indices.count(key)) {
      index = class_indices.at(key);
    } else {
      for (const auto& [name, i] : class_indices)
        if (std::to_string(i) == key) index = i;
    }
    if (index < 0) throw ConfigError("class weights '" + path + "': '" + key + "' is not a class of the data");
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      throw ConfigError("class weights '" + path + "': the weight of '" + key + "' must be a finite number >= 0");
    }
    w[index] = value.get<double>();
  }
  for (const auto& [name, i] : class_indices)
    if (!w.count(i)) throw ConfigError("class weights '" + path + "': no weight for class '" + name + "'");
  return w;
}

}  // namespace torchfit
