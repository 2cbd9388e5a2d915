#include <torchfit/training/model_checkpoint.h>

#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options)
    : options_(std::move(options)), monitor_(options_.monitor(), options_.mode(), 0.0) {
  if (options_.filepath().empty()) throw ConfigError("ModelCheckpoint: filepath is empty");
  if (options_.save_best_only() && options_.save_freq() > 0) {
    throw ConfigError("ModelCheckpoint: save_best_only saves at epoch ends only; it does not combine with save_freq " +
                      std::to_string(options_.save_freq()));
  }
  if (options_.save_freq() < 0) {
    throw ConfigError("ModelCheckpoint: save_freq must be >= 0, got " + std::to_string(options_.save_freq()));
  }
}

void ModelCheckpoint::save_now(int epoch) {
  std::string path = options_.filepath();
  const auto pos = path.find("{epoch}");
  if (pos != std::string::npos) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d", epoch + 1);
    path.replace(pos, 7, buf);
  }
  trainer().save_checkpoint(path, options_.class_indices());
  last_saved_ = path;
  steps_since_save_ = 0;
  spdlog::debug("ModelCheckpoint: saved {}", path);
}

void ModelCheckpoint::on_train_begin(const Logs&) {
  namespace fs = std::filesystem;
  const fs::path path(options_.filepath());
  if (fs::is_directory(path)) {
    throw IoError("ModelCheckpoint: filepath '" + options_.filepath() + "' is a directory; give a file path");
  }
  io::ensure_writable_directory(path.has_parent_path() ? path.parent_path().string() : std::string("."));
}

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  if (options_.save_best_only() && !monitor_.improved(monitor_.get(logs, "ModelCheckpoint"))) return;
  save_now(epoch);
}

void ModelCheckpoint::on_train_batch_end(int64_t, const Logs&) {
  if (options_.save_freq() > 0 && !options_.save_best_only() && ++steps_since_save_ >= options_.save_freq()) {
    save_now(trainer().position().epoch);
  }
}

}  // namespace torchfit
