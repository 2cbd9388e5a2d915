#include <torchfit/training/monitor.h>

#include <cmath>
#include <limits>

#include <torchfit/error.h>

namespace torchfit {

Monitor::Monitor(std::string monitor, std::string mode, double min_delta)
    : monitor_(std::move(monitor)), min_delta_(std::fabs(min_delta)) {
  if (mode == "auto") {
    maximize_ = monitor_.find("acc") != std::string::npos;
  } else if (mode == "min" || mode == "max") {
    maximize_ = mode == "max";
  } else {
    throw ConfigError("monitor mode must be auto, min or max, got '" + mode + "'");
  }
  reset();
}

void Monitor::reset() {
  best_ = maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

bool Monitor::better(double value, double reference) const {
  return maximize_ ? value - min_delta_ > reference : value + min_delta_ < reference;
}

bool Monitor::improved(double value) {
  if (better(value, best_)) {
    best_ = value;
    return true;
  }
  return false;
}

double Monitor::get(const Logs& logs, const std::string& who) const {
  auto it = logs.find(monitor_);
  if (it == logs.end()) {
    std::string keys;
    for (const auto& [k, v] : logs) keys += (keys.empty() ? "" : ", ") + k;
    throw ConfigError(who + ": monitored value '" + monitor_ + "' is not in the epoch logs (available: " + keys + ")");
  }
  return it->second;
}

}  // namespace torchfit
