#pragma once
/// @file reduce_lr_on_plateau.h
/// ReduceLROnPlateau — lowers the learning rate when a monitored value stalls
/// (keras.callbacks.ReduceLROnPlateau).
#include <string>

#include <torch/arg.h>

#include <torchfit/training/callback.h>
#include <torchfit/training/monitor.h>

namespace torchfit {

/// Options of ReduceLROnPlateau, Keras names and defaults.
struct ReduceLROnPlateauOptions {
  TORCH_ARG(std::string, monitor) = "val_loss";
  /// New lr = lr · factor, 0 < factor < 1.
  TORCH_ARG(double, factor) = 0.1;
  /// Epochs without improvement before reducing.
  TORCH_ARG(int, patience) = 10;
  /// "auto", "min" or "max" (Monitor).
  TORCH_ARG(std::string, mode) = "auto";
  /// Smallest change that counts as an improvement.
  TORCH_ARG(double, min_delta) = 1e-4;
  /// Epochs to wait after a reduction before counting again.
  TORCH_ARG(int, cooldown) = 0;
  /// Lower bound of the learning rate.
  TORCH_ARG(double, min_lr) = 0.0;
};

/// Multiplies the learning rate by `factor` when `monitor` has not improved for `patience` epochs,
/// never below min_lr; logs the change. Errors: ConfigError for factor outside (0, 1) or a bad mode.
class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(ReduceLROnPlateauOptions options = {});
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  ReduceLROnPlateauOptions options_;
  Monitor monitor_;
  int wait_ = 0;
  int cooldown_counter_ = 0;
};

}  // namespace torchfit
