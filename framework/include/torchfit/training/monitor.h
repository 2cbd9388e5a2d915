#pragma once
/// @file monitor.h
/// Monitor — the "is this epoch better?" rule shared by ModelCheckpoint, EarlyStopping and
/// ReduceLROnPlateau (Keras's monitor / mode / min_delta arguments).
#include <string>

#include <torchfit/training/logs.h>

namespace torchfit {

/// Tracks the best value of one log key. mode "min", "max", or "auto" (max for names containing
/// "acc", else min, as Keras). Errors: ConfigError for another mode.
class Monitor {
 public:
  Monitor(std::string monitor, std::string mode, double min_delta);
  /// True when `value` beats the best so far by more than |min_delta| (and records it).
  bool improved(double value);
  /// True when `value` beats `reference` by more than |min_delta|.
  bool better(double value, double reference) const;
  const std::string& name() const { return monitor_; }
  double best() const { return best_; }
  /// Forgets the best value (+inf for min, −inf for max).
  void reset();
  /// The monitored value from `logs`. Errors: ConfigError naming `who` and listing the available keys.
  double get(const Logs& logs, const std::string& who) const;

 private:
  std::string monitor_;
  bool maximize_;
  double min_delta_;
  double best_;
};

}  // namespace torchfit
