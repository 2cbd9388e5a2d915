#include <torchfit/training/resume.h>

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/training/trainer.h>

namespace torchfit {
namespace {

// "seed 42 → 7, augmentation none → rescale=..." for each stream setting that differs; "" when none.
std::string stream_differences(const data::StreamConfig& saved, const data::StreamConfig& now) {
  std::string text;
  for (const auto& [key, value] : saved) {
    const auto it = now.find(key);
    const std::string current = it == now.end() ? "(not set)" : it->second;
    if (current != value) text += (text.empty() ? "" : ", ") + key + " " + value + " → " + current;
  }
  return text;
}

void check_resumable(const std::string& path, const saving::CheckpointInfo& info, const data::BatchIterator& train,
                     const data::StreamConfig& stream, int world_size, int64_t steps) {
  const saving::TrainingPosition& pos = info.position;
  const auto classes = train.class_indices();
  if (!info.class_indices.empty() && !classes.empty() && info.class_indices != classes) {
    throw ConfigError("resume: checkpoint '" + path + "' was trained on other classes than the training data");
  }
  if (pos.batch_size > 0 && pos.batch_size != train.batch_size()) {
    throw ConfigError("resume: checkpoint '" + path + "' was trained with batch size " +
                      std::to_string(pos.batch_size) + ", the training data gives batches of " +
                      std::to_string(train.batch_size()) + " (other batches would regroup the " +
                      std::to_string(pos.train_samples) + " samples already seen; use batch size " +
                      std::to_string(pos.batch_size) + ")");
  }
  const auto saved = pos.data.find("world_size");
  const std::string saved_world = saved == pos.data.end() ? "1" : saved->second;
  if (saved_world != std::to_string(world_size)) {
    throw ConfigError("resume: checkpoint '" + path + "' was written by a run of " + saved_world +
                      " process(es), this run has " + std::to_string(world_size) +
                      ": resume with the same number of processes (each one's data shard and random numbers "
                      "depend on it)");
  }
  const std::string differences = stream_differences(pos.data, stream);
  if (!differences.empty()) {
    throw ConfigError("resume: checkpoint '" + path + "' would not continue exactly: the training data differs (" +
                      differences + "); resume with the saved settings, or start a new run");
  }
  if (pos.step > steps) {
    throw ConfigError("resume: checkpoint '" + path + "' stopped at step " + std::to_string(pos.step) + " of epoch " +
                      std::to_string(pos.epoch + 1) + ", beyond steps_per_epoch " + std::to_string(steps));
  }
}

// FitOptions without class_weight continue with the checkpoint's; other weights replace them (logged).
void resume_class_weight(const std::vector<double>& saved, FitOptions& opt) {
  FitOptions::ClassWeights kept;
  for (size_t c = 0; c < saved.size(); ++c) kept[static_cast<int64_t>(c)] = saved[c];
  if (opt.class_weight().empty()) {
    opt.class_weight(kept);
  } else if (opt.class_weight() != kept) {
    nlohmann::json now = nlohmann::json::array();
    for (const auto& [c, w] : opt.class_weight()) now.push_back(w);
    torchfit::logger().info("resume: class_weight {} → {}", saved.empty() ? "(none)" : nlohmann::json(saved).dump(),
                            now.dump());
  }
}

}  // namespace

data::StreamConfig stream_config_of(const data::BatchIterator& train, int world_size) {
  data::StreamConfig c = train.stream_config();
  if (world_size > 1) c["world_size"] = std::to_string(world_size);
  return c;
}

OptimizerOptions saved_optimizer_options(const saving::CheckpointInfo& info) {
  const auto& features = info.optimizer_features;
  if (features.is_object() && features.contains("config")) return OptimizerOptions::from_config(features["config"]);
  return OptimizerOptions::from_config(info.compile.value("optimizer", nlohmann::json::object()));
}

void resume_fit(Trainer& trainer, const saving::Checkpoint& checkpoint, data::BatchIterator& train,
                const data::StreamConfig& stream, FitOptions& opt, int64_t steps) {
  const std::string& path = checkpoint.path();
  // Everything that refuses the resume is decided before the model or the optimizer changes.
  check_resumable(path, checkpoint.info(), train, stream, trainer.world_size(), steps);
  if (opt.resume_learning_rate() && trainer.optimizer_features().has_schedule()) {
    throw ConfigError("resume: resume_learning_rate " + nlohmann::json(*opt.resume_learning_rate()).dump() +
                      " cannot replace the rate of a learning-rate schedule (as Keras; set the rate in the "
                      "schedule of the compile options)");
  }
  const saving::CheckpointInfo info = trainer.load_checkpoint(checkpoint);
  const saving::TrainingPosition& pos = info.position;
  if (opt.resume_learning_rate() && *opt.resume_learning_rate() != trainer.learning_rate()) {
    torchfit::logger().info("resume: learning rate {} → {}", trainer.learning_rate(), *opt.resume_learning_rate());
    trainer.set_learning_rate(*opt.resume_learning_rate());
  }
  resume_class_weight(info.class_weight, opt);
  // Put the data sources where the saved run left them (same seed ⇒ the same next batches).
  train.skip(pos.train_batches);
  if (opt.validation_data() && opt.validation_steps() > 0) opt.validation_data()->skip(pos.val_batches);
  opt.initial_epoch(pos.epoch).initial_step(pos.step);
  torchfit::logger().info("resumed from '{}' at epoch {}, step {} ({} training batches, {} samples done)", path,
                          pos.epoch + 1, pos.step, pos.train_batches, pos.train_samples);
}

}  // namespace torchfit
