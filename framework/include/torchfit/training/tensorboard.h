#pragma once
/// @file tensorboard.h
/// TensorBoard — scalars for TensorBoard (keras.callbacks.TensorBoard), written by io::EventFileWriter.
#include <memory>
#include <string>

#include <torch/arg.h>

#include <torchfit/io/tfevents.h>
#include <torchfit/training/callback.h>

namespace torchfit {

/// Options of TensorBoard, Keras names and defaults.
struct TensorBoardOptions {
  explicit TensorBoardOptions(std::string log_dir = "logs") : log_dir_(std::move(log_dir)) {}
  /// Folder of the run: event files go to log_dir/train and log_dir/validation (created).
  TORCH_ARG(std::string, log_dir);
  /// "epoch" (default): scalars at each epoch end only; "batch": also `batch_<name>` after every batch;
  /// a number N as text ("100"): after every N-th batch. Errors: ConfigError for anything else.
  TORCH_ARG(std::string, update_freq) = "epoch";
};

/// As keras.callbacks.TensorBoard's scalars: at each epoch end, `epoch_loss`, `epoch_<metric>` and
/// `epoch_learning_rate` (the logs' "lr") into log_dir/train, and the `val_` values as `epoch_loss`,
/// `epoch_<metric>` into log_dir/validation, at step = epoch (0-based). With update_freq "batch" or N,
/// `batch_loss` and `batch_<metric>` (the running means of the epoch so far, as Keras's stateful
/// metrics give) go to log_dir/train at step = batches trained in the run so far (1-based, continued
/// by a resume). Each run (and each resume) starts new event files; TensorBoard merges them.
/// Errors: IoError naming the folder/file and the OS reason (at on_train_begin or a write).
class TensorBoard : public Callback {
 public:
  explicit TensorBoard(TensorBoardOptions options);
  void on_train_begin(const Logs& logs) override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  bool chief_only() const override { return true; }  ///< rank 0 only in data-parallel runs
  const TensorBoardOptions& options() const { return options_; }

 private:
  TensorBoardOptions options_;
  int64_t every_ = 0;  // batches between batch-level writes (0: epoch only)
  std::unique_ptr<io::EventFileWriter> train_, validation_;
};

}  // namespace torchfit
