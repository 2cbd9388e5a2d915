#pragma once
/// @file keras_save.h
/// Keras model files out (docs/keras_export.md): a torchfit model written as Keras 3 writes it, so that
/// `keras.saving.load_model` (and torchfit's own reader) loads it.
///
///   torchfit::keras::save_keras_model(*model, "model.keras");        // config.json + model.weights.h5
///   torchfit::keras::save_keras_weights(*model, "model.weights.h5"); // Keras 3 model.save_weights
///
/// Every layer writes its own weights through its Keras weight layout (Layer::keras_weights, the inverse
/// of the import), so a model that imports from Keras exports back to it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <torchfit/keras/keras_file.h>

namespace torchfit {
class ModelImpl;
}

namespace torchfit::keras {

/// The Keras format version the writers follow: "3.15.1" (the Keras 3 file format of keras.saving, the
/// keys of its layer configs as Keras 3.0 onwards reads them).
extern const char* const kKerasWriteVersion;
/// The tf.keras version whose HDF5 layout and model config save_keras_h5 follows: "2.4.0" (configs
/// without Keras 2.13's "module" keys, which every tf.keras 2 reads).
extern const char* const kKeras2WriteVersion;

/// The model's architecture as Keras 3's `config.json` (serialize_keras_object(model)):
/// - a Sequential: {"module": "keras", "class_name": "Sequential", "config": {"name", "trainable",
///   "dtype", "layers": [InputLayer {"batch_shape": [null, H, W, C], …}, …]}, "registered_name": null,
///   "build_config": {"input_shape": [null, H, W, C]}};
/// - a functional model: {"module": "keras.src.models.functional", "class_name": "Functional", "config":
///   {"name", "trainable", "layers": [… each with "name" and Keras 3's "inbound_nodes" ({"args":
///   [__keras_tensor__ …], "kwargs": {}})], "input_layers", "output_layers"}, "registered_name":
///   "Functional"}.
/// Each layer is {"module": "keras.layers", "class_name", "config", "registered_name": null} (+
/// "build_config" with its input shape when it has weights); its config is the layer's own (config(),
/// Keras's argument names) completed with the arguments Keras writes that torchfit leaves out (data_format
/// "channels_last", groups 1, null regularizers and constraints, Keras's default initializers, …),
/// "dtype" as Keras 3's DTypePolicy object of the model's policy, and Keras 3's spellings (LeakyReLU's
/// negative_slope). Shapes are Keras's (N, H, W, C) with null for the batch and for unknown sizes.
/// Errors: ConfigError naming the layer for a setting Keras has no argument for (a Keras 1 "th" Flatten or
/// BatchNormalization order).
nlohmann::json keras3_model_config(const ModelImpl& model);

/// The architecture as tf.keras 2 writes it (`model.to_json()`, an .h5 file's model_config):
/// {"class_name": "Sequential" | "Functional", "config": {"name", "layers": […], …}}: layer configs as
/// keras3_model_config's without Keras 3's "module"/"registered_name"/"build_config", "dtype" a policy
/// name, InputLayer's "batch_input_shape", functional inbound_nodes as [[[layer, node, tensor, {}], …]].
/// Errors: as keras3_model_config.
nlohmann::json keras2_model_config(const ModelImpl& model);

/// An optimizer's variables as the Keras writers take them (KerasSaveOptions::optimizer; training/
/// keras_optimizer_state.h reads them off a torch optimizer). Keras 3 saves `optimizer.variables` as
/// `optimizer/vars/0..n` of model.weights.h5: iterations (int64), the learning rate (float32; not under a
/// schedule), then per group of slots (Adam: {momentum, velocity}, then {velocity_hat}) the group's slots of
/// each trainable weight in turn (keras/src/optimizers/base_optimizer.py add_optimizer_variables interleaves
/// them). tf.keras 2 saves `optimizer_weights` with "<Class>/iter:0", then every weight's slot of one kind
/// before the next kind ("Adam/conv2d/kernel/m:0" …, then ".../v:0").
struct KerasOptimizerState {
  std::string class_name;               ///< Keras's class: "Adam", "AdamW", "SGD", "RMSprop"
  int64_t iterations = 0;               ///< the updates applied (Keras optimizer.iterations)
  std::optional<double> learning_rate;  ///< the rate now; none under a schedule (Keras keeps no variable)
  /// Keras 3's slot names in its build order, grouped as Keras creates them (see above).
  std::vector<std::vector<std::string>> groups;
  /// tf.keras 2's name of each slot ("momentum" → "m"); a slot without one is not written to .h5 files.
  std::map<std::string, std::string> keras2_names;
  /// Each trainable parameter's slots by Keras 3 name, in the parameter's own (LibTorch) layout, keyed by
  /// the parameter's TensorImpl; the writers convert them to the layer's Keras layout.
  std::map<const void*, std::map<std::string, at::Tensor>> slots;
};

/// What the Keras writers write beside the model.
struct KerasSaveOptions {
  /// The compile settings, as a torchfit checkpoint records them (saving/checkpoint.h CheckpointInfo::
  /// compile: {"loss", "metrics", "optimizer": {"name", "learning_rate", …}}, Keras's names): written as
  /// Keras 3's compile_config (keras_compile_config) or tf.keras 2's training_config. Null (default): none,
  /// and Keras loads the model uncompiled.
  nlohmann::json compile;
  /// The optimizer's variables (Keras's `model.save` writes them for a compiled, trained model; tf.keras 2's
  /// include_optimizer): none (default), or written to .keras and .h5 files in Keras's layout, each slot in
  /// its weight's Keras layout and Keras's trainable-variable order (model.layers, each layer's trainable
  /// weights). Errors: ConfigError naming the layer whose weight layout cannot carry a slot (a Keras weight
  /// made of two parameters), or a trainable parameter without slots.
  std::optional<KerasOptimizerState> optimizer;
  /// The class names and outside preprocessing of the training run (TorchfitMetadata), for a prediction
  /// from the file (predict_cnn) to name classes and feed pixels as training did; written where the
  /// format has room beside Keras's entries (.keras metadata.json, the .h5 root, TF.js userDefinedMetadata;
  /// not a .weights.h5), and ignored by Keras. Empty (default): nothing written.
  TorchfitMetadata torchfit;
};

/// Keras 3's compile_config of `compile` (KerasSaveOptions::compile): {"optimizer": {"module":
/// "keras.optimizers", "class_name": "Adam", "config": {…}, "registered_name": null}, "loss", "loss_weights":
/// null, "metrics", "weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile":
/// false}; a loss or metric given as Keras object JSON text written as that object. With `keras2`, tf.keras
/// 2's training_config: {"loss", "metrics", "weighted_metrics": null, "loss_weights": null,
/// "optimizer_config": {"class_name", "config"}} without Keras 3's optimizer settings (use_ema, …) that
/// tf.keras 2 refuses. Errors: ConfigError for an optimizer name without a Keras class.
nlohmann::json keras_compile_config(const nlohmann::json& compile, bool keras2 = false);

/// Writes `model` as a Keras 3 `.keras` zip (Keras's `model.save("x.keras")`): metadata.json
/// ({"keras_version", "date_saved"}), config.json (keras3_model_config) and model.weights.h5 (every
/// layer's weights at `layers/<key>/vars/<i>` in Keras 3's variable order, <key> the snake_case class name
/// counted in layer order: conv2d, conv2d_1, …; each `vars` group with the layer's "name"), entries stored
/// uncompressed as Keras writes them; config.json's compile_config when `options.compile` is given. Atomic: the file
/// appears whole or not at all. Errors: ConfigError as keras3_model_config, or naming a layer whose class has no Keras
/// weight layout; IoError naming the file when it cannot be written; ConfigError when torchfit was built without HDF5
/// and libzip.
void save_keras_model(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options = {});

/// Writes the weights alone as Keras 3's `model.save_weights("x.weights.h5")`: model.weights.h5 of
/// save_keras_model as a file. Errors: as save_keras_model.
void save_keras_weights(const ModelImpl& model, const std::string& path);

/// Writes `model` as tf.keras 2's full-model HDF5 (`model.save("x.h5")`): root attributes backend,
/// keras_version and model_config (keras2_model_config), `/model_weights` with layer_names, and per layer
/// a group with weight_names ("conv2d/kernel:0", …; a recurrent layer's "lstm/lstm_cell/kernel:0") and
/// those datasets in Keras's layout; the root attribute training_config when `options.compile` is given.
/// Atomic. Errors:
/// as save_keras_model.
void save_keras_h5(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options = {});

/// Writes `model` in TensorFlow.js's Layers format into the folder `dir` (created when missing), as
/// `tensorflowjs_converter --input_format keras` writes it: `model.json` ({"format": "layers-model",
/// "modelTopology": {"keras_version", "backend", "model_config": keras2_model_config}, "weightsManifest":
/// [{"paths": ["group1-shard1of1.bin", …], "weights": [{"name": "<layer>/<weight>", "shape", "dtype":
/// "float32"}, …]}]}; L1 and L2 regularizers written as the L1L2 class TensorFlow.js knows) and the weights
/// as little-endian float32 in manifest order, split into 4 MiB shards; `options.torchfit` as
/// "userDefinedMetadata": {"torchfit": …} (the other options have no TF.js form and are ignored).
/// `tf.loadLayersModel("…/model.json")` loads it in a browser or Node. The shards are written first and
/// model.json last, each atomically. Needs neither HDF5 nor libzip. Errors: ConfigError as
/// keras3_model_config or naming a layer without a Keras weight layout; IoError naming the folder or
/// file that cannot be written.
void save_tfjs_model(const ModelImpl& model, const std::string& dir, const KerasSaveOptions& options = {});

/// What save_keras_file writes for `path`, by its ending: "Keras 3 model" (.keras), "Keras 3 weights"
/// (.weights.h5), "tf.keras 2 HDF5 model" (.h5, .hdf5), "TensorFlow.js Layers model" (a folder: a path
/// ending in '/'); "" for any other path.
std::string keras_output_kind(const std::string& path);

/// The refusals of save_keras_file for `path`'s format, without writing anything or reading the weights:
/// the config checks (keras3_model_config / keras2_model_config) and, for a TF.js folder, the layers
/// TensorFlow.js lacks or computes otherwise. For a run that writes the file when it ends
/// (train_cnn --save-keras) to refuse before training. Errors: ConfigError as those writers.
void check_keras_file(const ModelImpl& model, const std::string& path);

/// Writes `model` in the format `path` names (keras_output_kind): save_keras_model, save_keras_weights,
/// save_keras_h5 or save_tfjs_model (into the folder, the trailing '/' dropped). Returns the kind written.
/// Errors: ConfigError naming `path` when it names none of them; as those functions.
std::string save_keras_file(const ModelImpl& model, const std::string& path, const KerasSaveOptions& options = {});

}  // namespace torchfit::keras
