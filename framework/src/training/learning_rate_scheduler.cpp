#include <torchfit/training/learning_rate_scheduler.h>

#include <cmath>
#include <string>

#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

LearningRateScheduler::LearningRateScheduler(std::function<double(int, double)> schedule)
    : schedule_(std::move(schedule)) {
  if (!schedule_) throw ConfigError("LearningRateScheduler: no schedule function");
}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  auto& t = trainer();
  const double lr = schedule_(epoch, t.learning_rate());
  if (!(lr > 0.0) || !std::isfinite(lr)) {
    throw ConfigError("LearningRateScheduler: schedule returned an invalid learning rate " + std::to_string(lr));
  }
  t.set_learning_rate(lr);
}

}  // namespace torchfit
