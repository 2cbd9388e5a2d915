#pragma once
/// @file keras_file.h
/// Reading Keras model files: the architecture (Keras's model JSON) and the weights by layer name, as
/// Keras stored them. Three kinds (docs/keras_import.md):
///  - a legacy HDF5 full model (`model.save("x.h5")`, Keras 2.x / tf.keras up to 2.15): root attribute
///    `model_config`, weights under `/model_weights/<layer>/<weight name>`, listed by each layer
///    group's `weight_names` attribute;
///  - a weights-only HDF5 file (`model.save_weights`, Keras 1.x to tf.keras 2.15: the layer groups at the
///    root) with the architecture JSON of `model.to_json()` beside it;
///  - a Keras 3 weights file (`model.save_weights("x.weights.h5")`: the `layers/<key>/vars/<i>` groups of a
///    .keras zip's model.weights.h5, at the root) with an architecture JSON beside it;
///  - a TensorFlow.js Layers model (`tensorflowjs_converter`, keras/keras_save.h save_tfjs_model): a folder
///    with model.json, or that file, whose modelTopology is the Keras config and whose weightsManifest lists
///    the weights (`<layer>/<weight>`) in the binary shards beside it;
///  - a Keras 3 `.keras` zip (config.json, metadata.json, model.weights.h5 with the weights at
///    `layers/<key>/vars/<i>`, <key> the snake_case class name counted in layer order).
/// Needs torchfit built with HDF5 and libzip (CMake TORCHFIT_WITH_KERAS_IMPORT); see
/// keras_import_available().
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

#include <torchfit/model/compile.h>

namespace torchfit::keras {
namespace detail {
class Hdf5File;
}

/// One layer's weights, in the order Keras lists them (Conv2D: kernel, bias; BatchNormalization: gamma,
/// beta, moving_mean, moving_variance, each only when the layer has it), as the file declares them: no
/// data is read until KerasFile::read_weight, so that what a file declares is checked against the model
/// before memory is spent on it.
struct KerasLayerWeights {
  std::string layer;               ///< the layer's name in the model config
  std::vector<std::string> names;  ///< the names as stored ("conv2d/kernel:0", "convolution2d_1_W", "vars/0")
  std::vector<std::string> paths;  ///< each weight's dataset in the HDF5 file ("/model_weights/conv2d/conv2d/kernel:0")
  std::vector<std::vector<int64_t>> shapes;  ///< the shapes the datasets declare, Keras's layout ((kh, kw, in, out))
  std::vector<std::string> dtypes;           ///< their element types as declared: "float32", "float16", "int32", …
};

/// What a Keras file has no field for but a prediction needs, written by torchfit beside Keras's own
/// entries (keras_save.h KerasSaveOptions::torchfit) and read back with the file: Keras itself ignores it.
/// Stored as {"class_names": [...], "preprocessing": {...}} under the key "torchfit" of a .keras file's
/// metadata.json, in the root attribute "torchfit" (JSON text) of a tf.keras 2 .h5 file, and under
/// "userDefinedMetadata" → "torchfit" of a TensorFlow.js model.json (TF.js's field for it).
struct TorchfitMetadata {
  /// The class names in output index order (the training folders' classes); empty when unknown.
  std::vector<std::string> class_names;
  /// The preprocessing the training run gave its images outside the model (saving/checkpoint.h
  /// CheckpointInfo::preprocessing: {"rescale", …}); null when unknown.
  nlohmann::json preprocessing;
  bool empty() const { return class_names.empty() && preprocessing.is_null(); }
  /// {"class_names": […], "preprocessing": {…}}, each key only when known.
  nlohmann::json to_json() const;
  /// The inverse of to_json. Errors: IoError naming `path` when `j` is not such an object (class_names
  /// not a list of distinct strings, preprocessing not an object).
  static TorchfitMetadata from_json(const nlohmann::json& j, const std::string& path);
};

/// The metadata of a training run: its class map (name → index, saving/checkpoint.h CheckpointInfo::
/// class_indices) as names in index order — none when the indices are not 0 … K−1 — and its preprocessing.
TorchfitMetadata torchfit_metadata(const std::map<std::string, int64_t>& class_indices,
                                   const nlohmann::json& preprocessing);

/// A Keras model file's contents.
struct KerasFile {
  std::string path;             ///< the file read (for error messages)
  std::string kind;             ///< "h5 model", "h5 weights", "keras3 weights", "keras zip" or "tfjs"
  std::string keras_version;    ///< "2.4.0", "3.15.1"; "" when the file does not say (Keras 1 weights)
  std::string backend;          ///< "tensorflow", "theano"; "" when the file does not say
  nlohmann::json model_config;  ///< {"class_name": "Sequential" | "Functional" | "Model", "config": …}
  /// The training settings Keras saved with the model (null when none): a .keras file's config.json
  /// "compile_config" (Keras 3: "optimizer", "loss", "metrics", …) or a legacy .h5's root attribute
  /// "training_config" (tf.keras 2: "optimizer_config", "loss", "metrics", …).
  nlohmann::json compile_config;
  /// What torchfit wrote beside Keras's entries (TorchfitMetadata); empty for a file Keras wrote.
  TorchfitMetadata torchfit;
  std::vector<KerasLayerWeights> weights;        ///< layers with weights, in the file's layer order
  std::shared_ptr<const detail::Hdf5File> hdf5;  ///< the open weights file, read by read_weight
  /// A TF.js model's weights, read with the file (its shards), by KerasLayerWeights::paths entry.
  std::shared_ptr<const std::map<std::string, at::Tensor>> values;

  /// Reads weight `i` of `w` (one of `weights`) as a float64 tensor of `w.shapes[i]`: allocates what the
  /// file declares, so check the declared shape first (load_keras_weights does, for every layer, before it
  /// reads anything). Errors: IoError naming the file and dataset when it is not floating-point or its
  /// data cannot be read.
  at::Tensor read_weight(const KerasLayerWeights& w, size_t i) const;
  /// The weights of layer `name`, nullptr when the file holds none for it.
  const KerasLayerWeights* find(const std::string& name) const;
  /// Keras's major version: from keras_version, else 1 when the config uses Keras 1 arguments
  /// (nb_filter, output_dim, dim_ordering, …), else 2.
  int keras_major() const;
};

/// Whether this torchfit was built with the Keras readers (HDF5 and libzip found by CMake).
bool keras_import_available();

/// Given a file's architecture (path, kind, versions and model_config filled, no weights yet): the most
/// bytes its weights may take (a .keras zip's model.weights.h5, inflated in memory), 0 for no bound but
/// the archive's own. load_keras_model builds the model here and bounds the weights by what it needs.
using KerasWeightsBudget = std::function<uint64_t(const KerasFile& architecture)>;

/// Reads a Keras model file: `.keras` (zip), or `.h5`/`.hdf5` (a full model, or the weights of
/// save_weights — tf.keras's layer_names layout or Keras 3's `layers/` groups —, which need `architecture_json`: the
/// path of the `model.to_json()` text). A given `architecture_json` replaces a full model's own config. The weights are
/// listed with their declared shapes and types, not read (KerasFile::read_weight). The zip entries' declared sizes are
/// checked before anything is inflated: against the archive (a stored entry holds what it declares, deflate expands at
/// most 1032:1), 64 MiB for config.json and metadata.json, and `budget` (called once the architecture is
/// read) for model.weights.h5; then an entry must hold exactly what it declares. Errors: IoError naming
/// the file for a missing, unreadable or malformed file (no model_config and no architecture, a listed
/// weight that is absent, a .keras without config.json or model.weights.h5, a zip entry that declares
/// more than those bounds or other than it holds); ConfigError when torchfit was built without the
/// readers (what to install).
///
/// A TensorFlow.js model (is_tfjs_model) is read whole: its shards' total size is checked against the
/// manifest (and `budget`) before they are read, float32 and int32 weights only. Errors: IoError naming
/// the file for a missing shard, shards of another size than the manifest declares, a quantized or other
/// weight type, or no modelTopology; it needs neither HDF5 nor libzip.
KerasFile read_keras_file(const std::string& path, const std::string& architecture_json = "",
                          const KerasWeightsBudget& budget = {});

/// The layers of a Keras model config in order (Sequential's list, bare in Keras 1/2.0 or under
/// "layers"; a functional model's "layers"): each {"class_name", "config", …}. Errors: ConfigError.
std::vector<nlohmann::json> keras_config_layers(const nlohmann::json& model_config);

/// The optimizer a Keras file was compiled with (compile_config's "optimizer" or training_config's
/// "optimizer_config", read by OptimizerOptions::from_keras: Keras 3's and tf.keras 2's configs); nullopt
/// when the file has none. Errors: ConfigError naming the file and the optimizer's field at fault.
std::optional<OptimizerOptions> keras_file_optimizer(const KerasFile& file);

/// Whether `path` names a Keras file by its extension (.h5, .hdf5, .keras; case-insensitive; a torchfit
/// checkpoint saved under a .h5 name is not one), or a TensorFlow.js Layers model (is_tfjs_model).
bool is_keras_file(const std::string& path);

/// Whether `path` is a TensorFlow.js Layers model: a folder holding model.json, or a .json file with a
/// "weightsManifest" (model.json).
bool is_tfjs_model(const std::string& path);

}  // namespace torchfit::keras
