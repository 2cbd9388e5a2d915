#pragma once
/// @file checkpoint.h
/// Checkpoints: one file with the model config (JSON), weights, optimizer state, class_indices,
/// epoch/step and the torchfit version — written atomically (io/atomic_file.h).
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/model/sequential.h>
#include <torchfit/training/trainer.h>

namespace torchfit::io {

/// Metadata stored beside the weights.
struct CheckpointInfo {
  nlohmann::json model_config;                    ///< Sequential::to_json()
  nlohmann::json compile;                         ///< loss, optimizer (name, lr, …), metrics
  std::map<std::string, int64_t> class_indices;   ///< class name → index
  TrainingPosition position;                      ///< epoch/step reached and batches taken from the sources
  std::string torchfit_version;
};

/// Saves the trainer's model, optimizer state, position (Trainer::position()), the CPU random-number
/// generator state (dropout) and metadata to `path` atomically. Errors: IoError naming the path.
void save_checkpoint(const std::string& path, Trainer& trainer,
                     const std::map<std::string, int64_t>& class_indices = {});

/// Reads only the metadata of a checkpoint. Errors: IoError naming the path (missing, not a torchfit
/// checkpoint, truncated).
CheckpointInfo read_checkpoint_info(const std::string& path);

/// Rebuilds the model from the checkpoint's config alone and loads its weights.
Sequential load_model(const std::string& path, CheckpointInfo* info = nullptr);

/// Loads weights (and, when `trainer` has an optimizer of the same kind, its state and learning rate),
/// the position and the CPU random-number generator state into an existing trainer, so that fit() with
/// initial_epoch/initial_step from the returned position continues the run exactly. Errors: IoError/ConfigError naming a parameter that is missing or has another shape (both shapes).
CheckpointInfo load_checkpoint(const std::string& path, Trainer& trainer, bool load_optimizer = true);

/// Copies weights from the checkpoint into `model` (names and shapes must match, see load_checkpoint).
void load_weights(const std::string& path, SequentialImpl& model);

}  // namespace torchfit::io
