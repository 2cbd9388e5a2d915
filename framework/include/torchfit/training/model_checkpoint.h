#pragma once
/// @file model_checkpoint.h
/// ModelCheckpoint — saves checkpoints during fit() (keras.callbacks.ModelCheckpoint).
#include <cstdint>
#include <map>
#include <string>

#include <torch/arg.h>

#include <torchfit/training/callback.h>
#include <torchfit/training/monitor.h>

namespace torchfit {

/// Options of ModelCheckpoint, Keras names and defaults.
struct ModelCheckpointOptions {
  using ClassIndices = std::map<std::string, int64_t>;
  /// File to write; "{epoch}" in it becomes the 1-based epoch, 2 digits (Keras `{epoch:02d}`).
  explicit ModelCheckpointOptions(std::string filepath) : filepath_(std::move(filepath)) {}
  TORCH_ARG(std::string, filepath);
  /// Log key compared by save_best_only.
  TORCH_ARG(std::string, monitor) = "val_loss";
  /// Save at an epoch end only when `monitor` improved.
  TORCH_ARG(bool, save_best_only) = false;
  /// "auto", "min" or "max" (Monitor).
  TORCH_ARG(std::string, mode) = "auto";
  /// 0 ⇒ at every epoch end (Keras "epoch"); N > 0 ⇒ also every N training steps (not with save_best_only).
  TORCH_ARG(int64_t, save_freq) = 0;
  /// torchfit addition: class name → index stored in each checkpoint (predict_cnn names its classes).
  TORCH_ARG(ClassIndices, class_indices) = {};
};

/// Saves a checkpoint (io/checkpoint.h: model, optimizer, position, RNG, class_indices) at the end of
/// every epoch, only when the monitored value improved (save_best_only), and every save_freq steps.
/// Silent, as Keras's default verbose=0. Errors: ConfigError for an empty filepath, save_freq < 0,
/// save_best_only with save_freq > 0, or a bad mode; IoError at on_train_begin when filepath is a folder
/// or its folder cannot be written, and when a file cannot be written; ConfigError when `monitor` is not
/// in the epoch logs.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(ModelCheckpointOptions options);
  /// Checks that filepath's folder can be written (before the first step).
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  /// Writes the checkpoint now (e.g. on Ctrl-C) at the trainer's current position; `epoch` (0-based)
  /// fills "{epoch}".
  void save_now(int epoch);
  /// Path of the last file written ("" if none).
  const std::string& last_saved() const { return last_saved_; }

 private:
  ModelCheckpointOptions options_;
  Monitor monitor_;
  int64_t steps_since_save_ = 0;
  std::string last_saved_;
};

}  // namespace torchfit
