#include <torchfit/training/reduce_lr_on_plateau.h>

#include <algorithm>

#include <torchfit/runtime/logging.h>

#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

ReduceLROnPlateau::ReduceLROnPlateau(ReduceLROnPlateauOptions options)
    : options_(std::move(options)), monitor_(options_.monitor(), options_.mode(), options_.min_delta()) {
  if (options_.factor() >= 1.0 || options_.factor() <= 0.0) {
    throw ConfigError("ReduceLROnPlateau: factor must be in (0, 1), got " + std::to_string(options_.factor()));
  }
}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
  wait_ = 0;
  cooldown_counter_ = 0;
  monitor_.reset();
}

void ReduceLROnPlateau::on_epoch_end(int epoch, const Logs& logs) {
  const double v = monitor_.get(logs, "ReduceLROnPlateau");
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (monitor_.improved(v)) {
    wait_ = 0;
    return;
  }
  if (cooldown_counter_ > 0 || ++wait_ < options_.patience()) return;
  auto& t = trainer();
  const double old_lr = t.learning_rate();
  if (old_lr <= options_.min_lr()) return;
  const double new_lr = std::max(old_lr * options_.factor(), options_.min_lr());
  t.set_learning_rate(new_lr);
  torchfit::logger().info("Epoch {}: ReduceLROnPlateau reducing learning rate to {}", epoch + 1, new_lr);
  cooldown_counter_ = options_.cooldown();
  wait_ = 0;
}

}  // namespace torchfit
