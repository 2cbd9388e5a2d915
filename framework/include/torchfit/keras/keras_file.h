#pragma once
/// @file keras_file.h
/// Reading Keras model files: the architecture (Keras's model JSON) and the weights by layer name, as
/// Keras stored them. Three kinds (docs/keras_import.md):
///  - a legacy HDF5 full model (`model.save("x.h5")`, Keras 2.x / tf.keras up to 2.15): root attribute
///    `model_config`, weights under `/model_weights/<layer>/<weight name>`, listed by each layer
///    group's `weight_names` attribute;
///  - a weights-only HDF5 file (`model.save_weights`, Keras 1.x to tf.keras 2.15: the layer groups at the
///    root) with the architecture JSON of `model.to_json()` beside it;
///  - a Keras 3 `.keras` zip (config.json, metadata.json, model.weights.h5 with the weights at
///    `layers/<key>/vars/<i>`, <key> the snake_case class name counted in layer order).
/// Needs torchfit built with HDF5 and libzip (CMake TORCHFIT_WITH_KERAS_IMPORT); see
/// keras_import_available().
#include <string>
#include <vector>

#include <ATen/Tensor.h>
#include <nlohmann/json.hpp>

namespace torchfit::keras {

/// One layer's weights, in the order Keras lists them (Conv2D: kernel, bias; BatchNormalization: gamma,
/// beta, moving_mean, moving_variance, each only when the layer has it).
struct KerasLayerWeights {
  std::string layer;               ///< the layer's name in the model config
  std::vector<std::string> names;  ///< the names as stored ("conv2d/kernel:0", "convolution2d_1_W", "vars/0")
  std::vector<at::Tensor> values;  ///< float64 tensors in Keras's layout (a Conv2D kernel (kh, kw, in, out))
};

/// A Keras model file's contents.
struct KerasFile {
  std::string path;                        ///< the file read (for error messages)
  std::string kind;                        ///< "h5 model", "h5 weights" or "keras zip"
  std::string keras_version;               ///< "2.4.0", "3.15.1"; "" when the file does not say (Keras 1 weights)
  std::string backend;                     ///< "tensorflow", "theano"; "" when the file does not say
  nlohmann::json model_config;             ///< {"class_name": "Sequential" | "Functional" | "Model", "config": …}
  std::vector<KerasLayerWeights> weights;  ///< layers with weights, in the file's layer order

  /// The weights of layer `name`, nullptr when the file holds none for it.
  const KerasLayerWeights* find(const std::string& name) const;
  /// Keras's major version: from keras_version, else 1 when the config uses Keras 1 arguments
  /// (nb_filter, output_dim, dim_ordering, …), else 2.
  int keras_major() const;
};

/// Whether this torchfit was built with the Keras readers (HDF5 and libzip found by CMake).
bool keras_import_available();

/// Reads a Keras model file: `.keras` (zip), or `.h5`/`.hdf5` (a full model, or the weights of
/// save_weights, which need `architecture_json`: the path of the `model.to_json()` text). A given
/// `architecture_json` replaces a full model's own config. Errors: IoError naming the file for a missing,
/// unreadable or malformed file (no model_config and no architecture, a listed weight that is absent, a
/// .keras without config.json or model.weights.h5); ConfigError when torchfit was built without the
/// readers (what to install).
KerasFile read_keras_file(const std::string& path, const std::string& architecture_json = "");

/// The layers of a Keras model config in order (Sequential's list, bare in Keras 1/2.0 or under
/// "layers"; a functional model's "layers"): each {"class_name", "config", …}. Errors: ConfigError.
std::vector<nlohmann::json> keras_config_layers(const nlohmann::json& model_config);

/// Whether `path` names a Keras file by its extension (.h5, .hdf5, .keras; case-insensitive).
bool is_keras_file(const std::string& path);

}  // namespace torchfit::keras
