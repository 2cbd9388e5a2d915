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
  /// File to write, formatted as Keras's `filepath.format(epoch=epoch + 1, **logs)`: "{epoch}" (1-based),
  /// "{batch}" (1-based step in the epoch) and any logs key ("{val_loss:.2f}", "{loss}",
  /// "{val_categorical_accuracy:.3f}"), with Python format specs (fmt). "w.{epoch:02d}.ckpt" keeps one
  /// file per epoch; a pattern without fields overwrites one file.
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
  /// torchfit addition: class name → index stored in each checkpoint (predict_cnn names its classes);
  /// empty (default) ⇒ the training source's (FitParams::class_indices).
  TORCH_ARG(ClassIndices, class_indices) = {};
};

/// Formats a ModelCheckpoint filepath as Keras's ModelCheckpoint._get_file_path: `epoch` and `batch` are
/// 0-based and written 1-based; every `logs` key is a named field. Errors: ConfigError naming the pattern,
/// the reason (unknown key, a positional field such as "{}" or "{0}", bad format spec) and the keys
/// available.
std::string format_filepath(const std::string& pattern, int epoch, int64_t batch, const Logs& logs);

/// Saves a checkpoint (saving/checkpoint.h: model, optimizer, position, RNG, class_indices) at the end of
/// every epoch, only when the monitored value improved (save_best_only), every save_freq steps, and when
/// fit() stops on an interrupt (Ctrl-C: Trainer::interrupted(), at the step reached, whatever
/// save_best_only says; saved_on_interrupt() tells whether it was written).
/// Silent, as Keras's default verbose=0, except a warning when it keeps the last checkpoint because the
/// weights are not finite (nan/inf after a diverging step): such weights are never written.
/// Errors: ConfigError for an empty filepath, save_freq < 0, save_best_only with save_freq > 0, or a bad
/// mode; at on_train_begin, ConfigError when filepath names a key the logs will not have (val_ keys
/// without validation or with save_freq > 0) and IoError when filepath is a folder or its folder cannot
/// be written; IoError naming the file and the OS reason when a file cannot be written; ConfigError when
/// `monitor` is not in the epoch logs.
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(ModelCheckpointOptions options);
  /// Checks that filepath's folder can be written (before the first step).
  void on_train_begin(const Logs& logs) override;
  bool chief_only() const override { return true; }  ///< rank 0 only in data-parallel runs
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  /// After an interrupted fit(): save_now() at the position reached. After a fit() that ended with the
  /// averaged weights (OptimizerOptions::use_ema): the last checkpoint written again, its model holding the
  /// averages (what predict_cnn and load_model read) and its training state the trained weights (what a
  /// resumed run continues from); holds_averaged_weights() then says so.
  void on_train_end(const Logs& logs) override;
  /// Writes the checkpoint now (e.g. on Ctrl-C) at the trainer's current position; `epoch` (0-based)
  /// fills "{epoch}", the latest logs seen the other fields (nan for a key not logged yet). Returns false
  /// (and warns) when the weights are not finite and nothing was written.
  bool save_now(int epoch);
  /// Path of the last file written ("" if none): the formatted filepath, a file that exists.
  const std::string& last_saved() const { return last_saved_; }
  /// Whether the last fit() was interrupted and its checkpoint written then (false: not interrupted, or
  /// the weights were not finite).
  bool saved_on_interrupt() const { return saved_on_interrupt_; }
  /// Whether the last fit() ended with the averaged weights and last_saved() holds them (use_ema).
  bool holds_averaged_weights() const { return holds_averaged_weights_; }

 private:
  bool save(int epoch, int64_t batch, const Logs& logs);
  std::string check_filepath_keys() const;

  ModelCheckpointOptions options_;
  Monitor monitor_;
  int64_t steps_since_save_ = 0;
  std::string last_saved_;
  Logs latest_logs_;
  bool saved_on_interrupt_ = false;
  bool holds_averaged_weights_ = false;
};

}  // namespace torchfit
