// Trainer's checkpoints (saving/checkpoint.h): what a fit() needs to continue exactly.
#include <torchfit/training/trainer.h>

#include <torchfit/runtime/logging.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/optimizers.h>

namespace torchfit {

void Trainer::save_checkpoint(const std::string& path, const std::map<std::string, int64_t>& class_indices) {
  saving::TrainingState state{model_, optimizer_.get(), options_, position_, class_indices, nullptr};
  state.class_weight = class_weight_values_;
  state.preprocessing = preprocessing_;
  if (loss_scaler_) state.loss_scale = loss_scaler_->state();
  if (features_->enabled()) {
    state.optimizer_features = features_->state();
    state.optimizer_slots = features_->tensors();
  }
  state.save_own_variables = [this](torch::serialize::OutputArchive& store) { save_own_variables(store); };
  saving::save_checkpoint(path, state);
}

saving::CheckpointInfo Trainer::load_checkpoint(const std::string& path, bool load_optimizer) {
  return load_checkpoint(*saving::Checkpoint::read(path), load_optimizer);
}

saving::CheckpointInfo Trainer::load_checkpoint(const saving::Checkpoint& checkpoint, bool load_optimizer) {
  const std::string& path = checkpoint.path();
  saving::TrainingState state{model_, load_optimizer ? optimizer_.get() : nullptr, options_, {}, {}, nullptr};
  state.load_own_variables = [this](torch::serialize::InputArchive& store) { load_own_variables(store); };
  saving::CheckpointInfo info = saving::load_checkpoint(checkpoint, state);
  position_ = info.position;
  if (loss_scaler_ && load_optimizer && !info.loss_scale.is_null()) loss_scaler_->load_state(info.loss_scale);
  if (load_optimizer && (features_->enabled() || !info.optimizer_features.is_null())) {
    const std::string changed = optimizer_config_changes(info.optimizer_features.value("config", nlohmann::json()),
                                                         features_->state()["config"]);
    if (!changed.empty()) torchfit::logger().info("checkpoint '{}': optimizer settings {}", path, changed);
    features_->load(info.optimizer_features.is_null() ? nlohmann::json::object() : info.optimizer_features,
                    info.optimizer_slots);
  }
  if (!loss_scaler_ && load_optimizer && !info.loss_scale.is_null()) {
    torchfit::logger().info("checkpoint '{}' holds a loss-scaling state ({}); this run has no loss scaling", path,
                            info.loss_scale.dump());
  }
  return info;
}

}  // namespace torchfit
