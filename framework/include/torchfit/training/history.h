#pragma once
/// @file history.h
/// History — per-epoch metrics returned by fit (keras.callbacks.History).
#include <map>
#include <string>
#include <vector>

namespace torchfit {

/// Logs passed to callbacks: metric name → value ("loss", "categorical_accuracy", "val_loss", "lr", …).
using Logs = std::map<std::string, double>;

/// `history["loss"][e]` is the mean training loss of the e-th epoch run (epochs as run, in order).
struct History {
  std::vector<int> epoch;
  std::map<std::string, std::vector<double>> history;
  /// The latest value of `key`. Errors: std::out_of_range naming the key.
  double last(const std::string& key) const;
};

}  // namespace torchfit
