#include <torchfit/training/early_stopping.h>

#include <torchfit/runtime/logging.h>

#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

EarlyStopping::EarlyStopping(EarlyStoppingOptions options)
    : options_(std::move(options)), monitor_(options_.monitor(), options_.mode(), options_.min_delta()) {
  if (options_.patience() < 0) {
    throw ConfigError("EarlyStopping: patience must be >= 0, got " + std::to_string(options_.patience()));
  }
}

void EarlyStopping::on_train_begin(const Logs&) {
  wait_ = 0;
  stopped_epoch_ = -1;
  monitor_.reset();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(int epoch, const Logs& logs) {
  const double v = monitor_.get(logs, "EarlyStopping");
  auto& model = trainer().model();
  if (monitor_.improved(v)) {
    wait_ = 0;
    if (options_.restore_best_weights()) {
      best_weights_.clear();
      for (const auto& p : model->named_parameters()) best_weights_[p.key()] = p.value().detach().clone();
    }
    return;
  }
  if (++wait_ < options_.patience()) return;
  stopped_epoch_ = epoch;
  trainer().stop_training = true;
  if (options_.restore_best_weights() && !best_weights_.empty()) {
    at::NoGradGuard g;
    for (auto& p : model->named_parameters()) p.value().copy_(best_weights_.at(p.key()));
    torchfit::logger().info("EarlyStopping: restored the weights of the best epoch ({} = {})", monitor_.name(),
                            monitor_.best());
  }
}

}  // namespace torchfit
