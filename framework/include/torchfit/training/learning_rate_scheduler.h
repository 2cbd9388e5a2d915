#pragma once
/// @file learning_rate_scheduler.h
/// LearningRateScheduler — sets the learning rate at each epoch start
/// (keras.callbacks.LearningRateScheduler).
#include <functional>

#include <torchfit/training/callback.h>

namespace torchfit {

/// At each epoch start sets the learning rate to schedule(epoch (0-based), current lr).
/// Errors: ConfigError when the schedule returns a value that is not a finite number > 0.
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int, double)> schedule);
  void on_epoch_begin(int epoch, const Logs& logs) override;

 private:
  std::function<double(int, double)> schedule_;
};

}  // namespace torchfit
