#pragma once
/// @file callbacks.h
/// Keras callbacks with Keras defaults: ModelCheckpoint, EarlyStopping, CSVLogger, ReduceLROnPlateau,
/// LearningRateScheduler. Epoch numbers passed to callbacks are 0-based as in Keras.
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include <ATen/ATen.h>
#include <torchfit/training/history.h>

namespace torchfit {

class Trainer;

/// Base class: override what you need. `trainer()` gives the model, optimizer and learning rate.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_begin(const Logs& logs) {}
  virtual void on_train_end(const Logs& logs) {}
  virtual void on_epoch_begin(int epoch, const Logs& logs) {}
  virtual void on_epoch_end(int epoch, const Logs& logs) {}
  virtual void on_train_batch_end(int64_t step, const Logs& logs) {}
  void set_trainer(Trainer* t) { trainer_ = t; }
  Trainer& trainer() const;

 private:
  Trainer* trainer_ = nullptr;
};

/// How a monitored value improves: "min", "max", or "auto" (max for names containing "acc", else min).
class Monitor {
 public:
  Monitor(std::string monitor, std::string mode, double min_delta);
  /// True when `value` beats the best so far by more than min_delta (and records it).
  bool improved(double value);
  bool better(double value, double reference) const;
  const std::string& name() const { return monitor_; }
  double best() const { return best_; }
  void reset();
  /// The monitored value from logs. Errors: ConfigError listing the available keys.
  double get(const Logs& logs, const std::string& who) const;

 private:
  std::string monitor_;
  bool maximize_;
  double min_delta_;
  double best_;
};

/// Saves a checkpoint (io/checkpoint.h) at the end of every epoch, or only when `monitor` improved
/// (save_best_only); with `save_freq` N > 0 also every N training steps (Keras save_freq as an integer).
/// `filepath` may contain "{epoch}" (1-based, 2 digits, as Keras formats it). Defaults as Keras:
/// monitor "val_loss", save_best_only false, mode "auto", save_freq "epoch" (0).
class ModelCheckpoint : public Callback {
 public:
  explicit ModelCheckpoint(std::string filepath, std::string monitor = "val_loss", bool save_best_only = false,
                           std::string mode = "auto", int64_t save_freq = 0);
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_batch_end(int64_t step, const Logs& logs) override;
  /// Writes the checkpoint now (e.g. on Ctrl-C) for the trainer's current position.
  void save_now(int epoch);
  /// Path of the last file written ("" if none).
  const std::string& last_saved() const { return last_saved_; }
  /// Class map stored in each checkpoint (for predict_cnn).
  void set_class_indices(std::map<std::string, int64_t> c) { class_indices_ = std::move(c); }

 private:
  std::string filepath_;
  std::map<std::string, int64_t> class_indices_;
  bool save_best_only_;
  int64_t save_freq_;
  int64_t steps_since_save_ = 0;
  Monitor monitor_;
  std::string last_saved_;
};

/// Stops training when `monitor` has not improved by more than min_delta for `patience` epochs.
/// restore_best_weights puts back the best epoch's weights at the stop. Keras defaults: monitor
/// "val_loss", min_delta 0, patience 0, mode "auto", restore_best_weights false.
class EarlyStopping : public Callback {
 public:
  explicit EarlyStopping(std::string monitor = "val_loss", double min_delta = 0.0, int patience = 0,
                         std::string mode = "auto", bool restore_best_weights = false);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  /// 0-based epoch at which training stopped (−1 if it did not).
  int stopped_epoch() const { return stopped_epoch_; }

 private:
  Monitor monitor_;
  int patience_;
  bool restore_;
  int wait_ = 0;
  int stopped_epoch_ = -1;
  std::map<std::string, at::Tensor> best_weights_;
};

/// Streams epoch results to a CSV file: header `epoch,<sorted keys>`, one row per epoch (0-based epoch),
/// flushed each row. Keras defaults: separator ',', append false.
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  std::string filename_;
  char sep_;
  bool append_;
  std::ofstream file_;
  std::vector<std::string> keys_;
};

/// Multiplies the learning rate by `factor` when `monitor` stalls for `patience` epochs. Keras defaults:
/// monitor "val_loss", factor 0.1, patience 10, mode "auto", min_delta 1e-4, cooldown 0, min_lr 0.
class ReduceLROnPlateau : public Callback {
 public:
  explicit ReduceLROnPlateau(std::string monitor = "val_loss", double factor = 0.1, int patience = 10,
                             std::string mode = "auto", double min_delta = 1e-4, int cooldown = 0,
                             double min_lr = 0.0);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  Monitor monitor_;
  double factor_;
  int patience_;
  int cooldown_;
  double min_lr_;
  int wait_ = 0;
  int cooldown_counter_ = 0;
};

/// Sets the learning rate at the start of each epoch to schedule(epoch (0-based), current lr).
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int, double)> schedule);
  void on_epoch_begin(int epoch, const Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
};

}  // namespace torchfit
