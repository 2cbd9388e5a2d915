// Keras weights → torchfit parameters (keras_import.h): each layer of the file's config gets its stored
// weights through its own Keras weight layout (Layer::set_keras_weights), with the Keras 1 facts of the file
// (a "th" kernel layout, the Theano flip).
#include <torchfit/error.h>
#include <torchfit/model/keras_json.h>
#include <torchfit/saving/keras_import.h>

#include "../model/keras_layer_config.h"

namespace torchfit::saving {
namespace {

using nlohmann::json;

bool flips_kernels(const KerasFile& file, const KerasImportOptions& options, bool channels_first) {
  if (file.keras_major() != 1) return false;  // Keras 2's Theano backend convolves without the flip
  std::string backend = !options.keras1_backend.empty() ? options.keras1_backend : file.backend;
  if (backend.empty()) backend = channels_first ? "theano" : "tensorflow";
  if (backend != "theano" && backend != "tensorflow") {
    throw ConfigError(file.path + ": unknown Keras 1 backend \"" + backend + "\" (theano or tensorflow)");
  }
  return backend == "theano";
}

}  // namespace

void load_keras_weights(const KerasFile& file, const LayerLookup& get_layer, const KerasImportOptions& options) {
  const auto layers = keras_config_layers(file.model_config);
  const bool channels_first = keras_model_is_channels_first(file.model_config);
  const bool keras1_th = file.keras_major() == 1 && channels_first;
  const bool flip = flips_kernels(file, options, channels_first);
  size_t used = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& spec = layers[i];
    const std::string cls = spec.value("class_name", "");
    const std::string name = spec["config"].value("name", "");
    if (cls == "InputLayer") continue;
    const KerasLayerWeights* stored = file.find(name);
    std::shared_ptr<Layer> layer = get_layer(name);
    if (!stored) {
      if (layer->count_params() > 0) {
        throw ConfigError(file.path + ": layer '" + name + "' (" + cls +
                          ") has weights but the file holds none for it");
      }
      continue;
    }
    ++used;
    try {
      layer->set_keras_weights(stored->values, KerasWeightOptions{keras1_th, flip});  // the layer's own layout
    } catch (const ConfigError& e) {
      throw ConfigError(file.path + ": " + e.what());
    }
  }
  if (used != file.weights.size()) {
    for (const auto& w : file.weights) {
      bool found = false;
      for (const auto& spec : layers) found = found || spec["config"].value("name", "") == w.layer;
      if (!found) throw ConfigError(file.path + ": weights for layer '" + w.layer + "', which the model config lacks");
    }
  }
}

bool keras_model_is_channels_first(const json& keras_model_config) {
  const auto layers = keras_config_layers(keras_model_config);
  return keras_config::keras1_channels_first(json(layers));
}

Model build_keras_model(const KerasFile& file) {
  try {
    return model_from_json(file.model_config);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + ": " + e.what());
  }
}

Model load_keras_model(const std::string& path, const std::string& architecture_json,
                       const KerasImportOptions& options) {
  const KerasFile file = read_keras_file(path, architecture_json);
  Model model = build_keras_model(file);
  load_keras_weights(
      file, [&](const std::string& n) { return model->get_layer(n); }, options);
  model->eval();
  return model;
}

Model load_checkpoint_or_keras(const std::string& path, const std::string& architecture_json, CheckpointInfo* info) {
  if (!is_keras_file(path)) {
    if (!architecture_json.empty()) {
      throw ConfigError(path + ": an architecture JSON goes with a Keras weights file (.h5), not a checkpoint");
    }
    Model model = load_model(path, info);
    model->eval();
    return model;
  }
  Model model = load_keras_model(path, architecture_json);
  if (info) {
    *info = CheckpointInfo{};
    info->model_config = model->to_json();
  }
  return model;
}

}  // namespace torchfit::saving
