#pragma once
/// @file callback.h
/// Callback — the hooks fit() calls (keras.callbacks.Callback), the run parameters they see, and
/// CallbackList, which calls a list of them in order (keras.callbacks.CallbackList).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torchfit/training/logs.h>

namespace torchfit {

class Trainer;

/// What fit() was asked to do (Keras: Callback.params), set before on_train_begin.
struct FitParams {
  int epochs = 1;            ///< epochs to run up to (the last epoch's 0-based index + 1)
  int64_t steps = 0;         ///< steps (batches) per epoch
  int verbose = 1;           ///< 0 silent, 1 progress bar, 2 one line per epoch
  int initial_epoch = 0;     ///< first epoch run (0-based; > 0 when resuming)
  int64_t initial_step = 0;  ///< steps of `initial_epoch` done before this run (resuming mid-epoch)
  int64_t batch_size = 0;    ///< the training source's configured batch size
  int64_t warmup_steps = 0;  ///< first steps of the run flagged as warm-up (StepTiming::warmup)
  bool validation = false;   ///< epochs end with validation (val_ keys in the epoch logs)
  /// The training source's class map (BatchIterator::class_indices; empty for tensors): what a checkpoint
  /// stores for predict_cnn to name its classes.
  std::map<std::string, int64_t> class_indices;
};

/// Base class of everything fit() reports through: override the hooks you need.
///
/// Indices: `epoch` is 0-based (Keras); `batch` is the 0-based step within the epoch, counted from the
/// epoch's start also when a resumed run starts mid-epoch (so the first batch of a run resumed after
/// step 3 is batch 3). Logs (name → value):
/// - on_epoch_begin: "lr" (the learning rate the epoch starts with).
/// - on_train_batch_end: "loss" and each metric name: running means over the epoch's steps so far
///   (this run's steps, weighted by batch size; as Keras ≥ 2.2); "batch_loss" and "batch_<metric>":
///   this batch's mean; "size": images in the batch; "data_ms", "h2d_ms", "compute_ms", "step_ms":
///   the step's timing in milliseconds (timing.h); "warmup": 1 for a warm-up step, else 0.
/// - on_epoch_end: "loss" and metric names (the epoch's means; nan when a resumed epoch ran no step),
///   "val_loss" and "val_<metric>" when validating, "lr" (the learning rate used by the epoch).
/// - on_train_end: the last epoch's logs (empty when no epoch finished).
/// trainer() gives the model, optimizer, learning rate, position and step timings; params() the run's
/// FitParams. A hook may throw: fit() then calls on_train_error on every callback and rethrows.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(const Logs& logs) {}
  virtual void on_train_end(const Logs& logs) {}
  virtual void on_epoch_begin(int epoch, const Logs& logs) {}
  virtual void on_epoch_end(int epoch, const Logs& logs) {}
  virtual void on_train_batch_end(int64_t batch, const Logs& logs) {}
  /// torchfit addition: fit() is ending with an error (`message` is its what()); files can record it.
  virtual void on_train_error(const std::string& message) {}
  /// Data-parallel runs: true for callbacks that print or write files (progress line, run files,
  /// checkpoints, CSV logs), which fit() calls on rank 0 only; the others run on every rank (they see the
  /// same, allreduced logs, so EarlyStopping or ReduceLROnPlateau decide alike everywhere).
  virtual bool chief_only() const { return false; }

  void set_trainer(Trainer* t) { trainer_ = t; }
  /// The trainer running fit(). Errors: torchfit::Error when called outside fit().
  Trainer& trainer() const;
  void set_params(const FitParams& p) { params_ = p; }
  const FitParams& params() const { return params_; }

 private:
  Trainer* trainer_ = nullptr;
  FitParams params_;
};

using CallbackPtr = std::shared_ptr<Callback>;

/// Calls each hook on every callback, in list order (keras.callbacks.CallbackList).
class CallbackList {
 public:
  CallbackList(std::vector<CallbackPtr> callbacks, Trainer* trainer, const FitParams& params);
  void on_train_begin(const Logs& logs = {});
  void on_train_end(const Logs& logs);
  void on_epoch_begin(int epoch, const Logs& logs);
  void on_epoch_end(int epoch, const Logs& logs);
  void on_train_batch_end(int64_t batch, const Logs& logs);
  /// Calls on_train_error on every callback; errors they throw are dropped (the original one matters).
  void on_train_error(const std::string& message) noexcept;

 private:
  std::vector<CallbackPtr> callbacks_;
};

}  // namespace torchfit
