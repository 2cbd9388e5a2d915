#include <torchfit/training/class_weight.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include <torchfit/error.h>

namespace torchfit {

namespace {
constexpr double kMaxClassWeight = 1e6;  // times a loss of ~100 still far inside float32
}  // namespace

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
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ConfigError("class weights '" + path + "' is a directory");
  errno = 0;
  std::ifstream in(path);
  if (!in) throw ConfigError("class weights '" + path + "' cannot be read (" + std::strerror(errno) + ")");
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
    if (!value.is_number() || !(value.get<double>() >= 0) || value.get<double>() > kMaxClassWeight) {
      throw ConfigError("class weights '" + path + "': the weight of '" + key + "' is " + value.dump() +
                        ": must be a number in [0, 1e6] (larger weights overflow the float32 loss)");
    }
    if (w.count(index)) {
      throw ConfigError("class weights '" + path + "': class " + std::to_string(index) + " ('" + key +
                        "') is named twice (by name and by index)");
    }
    w[index] = value.get<double>();
  }
  bool any = false;
  for (const auto& [i, v] : w) any = any || v > 0;
  if (!w.empty() && !any)
    throw ConfigError("class weights '" + path + "': every weight is 0 (nothing would be learned)");
  for (const auto& [name, i] : class_indices)
    if (!w.count(i)) throw ConfigError("class weights '" + path + "': no weight for class '" + name + "'");
  return w;
}

std::map<int64_t, double> class_weight_from_spec(const std::string& spec, const std::vector<int64_t>& labels,
                                                 const std::map<std::string, int64_t>& class_indices) {
  std::string lower = spec;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::error_code ec;
  if (spec.empty() || (spec != "balanced" && lower == "balanced" && !std::filesystem::exists(spec, ec)))
    throw ConfigError("'" + spec + "' is neither balanced (lower case) nor a JSON file");
  if (spec == "balanced") return balanced_class_weight(labels, static_cast<int64_t>(class_indices.size()));
  return read_class_weight(spec, class_indices);
}

std::vector<double> class_weight_vector(const std::map<int64_t, double>& weights, int64_t classes) {
  std::vector<double> values;
  for (int64_t c = 0; c < classes; ++c) {
    const auto it = weights.find(c);
    if (it == weights.end()) throw ConfigError("class_weight has no weight for class " + std::to_string(c));
    if (!std::isfinite(it->second) || it->second < 0)
      throw ConfigError("class_weight of class " + std::to_string(c) + " must be a finite number >= 0");
    values.push_back(it->second);
  }
  if (!weights.empty() && (weights.rbegin()->first >= classes || weights.begin()->first < 0)) {
    const int64_t bad = weights.begin()->first < 0 ? weights.begin()->first : weights.rbegin()->first;
    throw ConfigError("class_weight names class " + std::to_string(bad) + ", the model has " + std::to_string(classes) +
                      " classes");
  }
  return values;
}

}  // namespace torchfit
