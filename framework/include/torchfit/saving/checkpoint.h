#pragma once
/// @file checkpoint.h
/// Checkpoints: one file with the model config (JSON), weights, optimizer state, class_indices,
/// epoch/step and the torchfit version — written atomically (io/atomic_file.h). Depends on the model,
/// an optimizer and a training position only (not on Trainer; Trainer::save_checkpoint wraps it).
/// Every checkpoint states its format ("format_version", this torchfit writes and reads format 1) and the
/// torchfit release that wrote it. Reading a newer format is an IoError saying so: "checkpoint 'm.ckpt'
/// was written by torchfit 9.9.0, checkpoint format 2; this torchfit (0.1.0) reads format 1 — upgrade
/// torchfit to read it"; a model this torchfit cannot build (an unknown layer class) is a ConfigError
/// naming the file, the writing version and the class.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torch/optim/optimizer.h>

#include <torchfit/layers/input_layer.h>
#include <torchfit/model/compile.h>
#include <torchfit/model/model.h>

namespace torchfit::saving {

/// Where a run stands: what a checkpoint records so that a resumed run continues exactly.
struct TrainingPosition {
  int epoch = 0;              ///< epochs completed
  int64_t step = 0;           ///< steps completed within epoch `epoch + 1` (0 at an epoch boundary)
  int64_t train_batches = 0;  ///< batches taken from the training source since the run began
  int64_t val_batches = 0;    ///< batches taken from the validation source (validation_steps > 0)
  int64_t batch_size = 0;     ///< the training source's batch size (0: not recorded, older checkpoints)
  int64_t train_samples = 0;  ///< samples taken from the training source since the run began (actual sizes)
  /// The training source's stream settings (BatchIterator::stream_config: seed, batch size, target size,
  /// augmentation, ...) when the position was saved; empty in older checkpoints.
  std::map<std::string, std::string> data;
};

/// Metadata stored beside the weights.
struct CheckpointInfo {
  nlohmann::json model_config;                   ///< ModelImpl::to_json() (Sequential or functional)
  nlohmann::json compile;                        ///< loss, optimizer (name, lr, …), metrics
  std::map<std::string, int64_t> class_indices;  ///< class name → index
  TrainingPosition position;                     ///< epoch/step reached and batches taken from the sources
  nlohmann::json loss_scale;                     ///< LossScaleOptimizer::state(); null when the run had none
  /// The optimizer's Keras features (training/optimizer_features.h: iterations, accumulated batches,
  /// config); null in checkpoints without them.
  nlohmann::json optimizer_features;
  /// Their tensors ("ema_<i>", "accumulator_<i>"), read by load_checkpoint with an optimizer.
  std::map<std::string, at::Tensor> optimizer_slots;
  /// The run's class weights (FitOptions::class_weight), one per class index; empty when it had none.
  std::vector<double> class_weight;
  /// [H, W] the model was built at when its input's size is unknown (None in model_config); else null.
  nlohmann::json input_size;
  /// The input preprocessing the model was trained with (BatchIterator::preprocessing of the training
  /// source: {"rescale", "samplewise_center", "samplewise_std_normalization"} for an image folder), what
  /// predictions must apply too; null when the source recorded none or the checkpoint predates the field.
  nlohmann::json preprocessing;
  std::string torchfit_version;  ///< the torchfit release that wrote it ("" before 0.x recorded it)
  int format_version = 1;        ///< checkpoint format (this torchfit reads 1)
};

/// What a checkpoint saves and restores.
struct TrainingState {
  Model model{nullptr};
  /// Saved/restored with its state and learning rate; nullptr ⇒ none (e.g. a model for predict()).
  torch::optim::Optimizer* optimizer = nullptr;
  /// Loss, optimizer name and hyper-parameters, metrics (stored as metadata).
  CompileOptions compile;
  TrainingPosition position;
  std::map<std::string, int64_t> class_indices;
  /// LossScaleOptimizer::state() of a run with loss scaling (null ⇒ none).
  nlohmann::json loss_scale = nullptr;
  /// OptimizerFeatures::state() and tensors() (null / empty ⇒ none), saved beside the optimizer.
  nlohmann::json optimizer_features = nullptr;
  std::map<std::string, at::Tensor> optimizer_slots = {};
  /// The class weights of the run, one per class index (Trainer::class_weight(); empty ⇒ none).
  std::vector<double> class_weight = {};
  /// The training source's input preprocessing (BatchIterator::preprocessing; null ⇒ none recorded).
  nlohmann::json preprocessing = nullptr;
  /// A custom training step's own variables (Trainer::save_own_variables / load_own_variables): written as
  /// the sub-archive "own_variables" when set; read back when set and the checkpoint has one.
  std::function<void(torch::serialize::OutputArchive&)> save_own_variables = nullptr;
  std::function<void(torch::serialize::InputArchive&)> load_own_variables = nullptr;
};

/// Saves the model's config and weights, the optimizer's state and learning rate, the position, the
/// CPU random-number generator state (dropout) and `class_indices` to `path` atomically.
/// Errors: IoError naming the path and the OS reason (no space, read-only, I/O error; the temporary file
/// is removed and an earlier file at `path` stays intact); torchfit::NumericError naming the weight when
/// a weight holds nan/inf (nothing is written).
void save_checkpoint(const std::string& path, const TrainingState& state);

/// A checkpoint file read once: its metadata and its contents, from which the model (load_model), the
/// weights and the optimizer state (load_checkpoint) are taken without reading the file again
/// (train_cnn --resume builds its model and continues the run from one read).
class Checkpoint {
 public:
  /// Reads `path`. Errors: IoError naming the path (missing, not a torchfit checkpoint, truncated).
  static std::shared_ptr<const Checkpoint> read(const std::string& path);
  /// The file it was read from (error messages name it).
  const std::string& path() const { return path_; }
  const CheckpointInfo& info() const { return info_; }

  struct Contents;  ///< the archive (checkpoint.cpp)
  Contents& contents() const { return *contents_; }

 private:
  Checkpoint() = default;
  std::string path_;
  CheckpointInfo info_;
  std::shared_ptr<Contents> contents_;
};

/// Reads only the metadata of a checkpoint. Errors: IoError naming the path (missing, not a torchfit
/// checkpoint, truncated).
CheckpointInfo read_checkpoint_info(const std::string& path);

/// Rebuilds the model from the checkpoint's config alone and loads its weights.
Model load_model(const std::string& path, CheckpointInfo* info = nullptr);
/// The same from a checkpoint already read.
Model load_model(const Checkpoint& checkpoint);

/// Loads into an existing state: the weights into `state.model`; when `state.optimizer` is set and the
/// checkpoint's optimizer has the name of `state.compile`'s, its state and learning rate; and the CPU
/// random-number generator state. Returns the metadata (its `position` is where to continue: fit()'s
/// FitOptions::resume_from does all of this). Errors: IoError/ConfigError naming the path and a parameter
/// that is missing or has another shape (both shapes), or an optimizer state that does not fit.
CheckpointInfo load_checkpoint(const std::string& path, const TrainingState& state);
/// The same from a checkpoint already read.
CheckpointInfo load_checkpoint(const Checkpoint& checkpoint, const TrainingState& state);

/// Copies weights from the checkpoint into `model` (names and shapes must match, see load_checkpoint).
void load_weights(const std::string& path, ModelImpl& model);

/// A model from a torchfit checkpoint (load_model) or, for a path keras::is_keras_file() accepts, a
/// Keras file (keras::load_keras_model; `architecture_json` for a weights-only .h5). For a Keras file
/// `info` (when given) gets the torchfit model config, and the class names (class_indices) and
/// preprocessing torchfit wrote into the file (keras::TorchfitMetadata; none in a file Keras wrote). The
/// model is in eval().
/// Errors: as load_model and load_keras_model; ConfigError for an architecture with a checkpoint.
/// `input_size` builds a Keras file's input of unknown size (keras::KerasImportOptions::input_size); a
/// checkpoint records the size it was built at.
Model load_checkpoint_or_keras(const std::string& path, const std::string& architecture_json = "",
                               CheckpointInfo* info = nullptr,
                               const std::optional<InputSize>& input_size = std::nullopt);

}  // namespace torchfit::saving
