#pragma once
/// @file early_stopping.h
/// EarlyStopping — ends fit() when a monitored value stops improving (keras.callbacks.EarlyStopping).
#include <map>
#include <string>

#include <ATen/core/Tensor.h>
#include <torch/arg.h>

#include <torchfit/training/callback.h>
#include <torchfit/training/monitor.h>

namespace torchfit {

/// Options of EarlyStopping, Keras names and defaults.
struct EarlyStoppingOptions {
  /// Epoch-log key watched.
  TORCH_ARG(std::string, monitor) = "val_loss";
  /// Smallest change that counts as an improvement (absolute value used).
  TORCH_ARG(double, min_delta) = 0.0;
  /// Epochs without improvement before stopping (0: stop at the first epoch that does not improve).
  TORCH_ARG(int, patience) = 0;
  /// "auto", "min" or "max" (Monitor).
  TORCH_ARG(std::string, mode) = "auto";
  /// At the stop, put back the weights of the best epoch.
  TORCH_ARG(bool, restore_best_weights) = false;
};

/// Sets Trainer::stop_training after `patience` epochs without improvement; fit() then ends after that
/// epoch (run.json status "stopped early"). Errors: ConfigError for a bad mode or a monitor missing
/// from the epoch logs.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(EarlyStoppingOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  /// 0-based epoch at which training stopped (−1 if it did not).
  int stopped_epoch() const { return stopped_epoch_; }

 private:
  EarlyStoppingOptions options_;
  Monitor monitor_;
  int wait_ = 0;
  int stopped_epoch_ = -1;
  std::map<std::string, at::Tensor> best_weights_;
};

}  // namespace torchfit
