// Keras weights → torchfit parameters (keras_import.h): each layer of the file's config gets its stored
// weights through its own Keras weight layout (Layer::set_keras_weights), with the Keras 1 facts of the file
// (a "th" kernel layout, the Theano flip) — after every declared shape was checked against the built layer.
#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/shape.h>

#include "keras_layer_config.h"

namespace torchfit::keras {
namespace {

using nlohmann::json;

std::string who(const KerasFile& file, const std::string& layer, const std::string& cls) {
  return file.path + ": layer '" + layer + "' (" + cls + ")";
}

// The shapes the built layer takes, in Keras's layout and order (Layer::keras_weights); a Keras 1 "th"
// convolution kernel is stored (out, in, kh, kw) instead of (kh, kw, in, out).
std::vector<std::vector<int64_t>> wanted_shapes(const Layer& layer, bool keras1_th) {
  std::vector<std::vector<int64_t>> out;
  for (const at::Tensor& w : layer.keras_weights()) {
    std::vector<int64_t> s = w.sizes().vec();
    if (keras1_th && s.size() == 4) s = {s[3], s[2], s[0], s[1]};
    out.push_back(s);
  }
  return out;
}

// Every weight of `stored` declares a floating-point type and the shape the built layer needs: else a
// ConfigError naming the file, layer, weight and both shapes, before a byte of it is read.
void check_declared(const KerasFile& file, const Layer& layer, const KerasLayerWeights& stored, bool keras1_th) {
  const std::string at = who(file, stored.layer, layer.class_name());
  std::vector<std::vector<int64_t>> want;
  try {
    want = wanted_shapes(layer, keras1_th);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + ": " + e.what());
  }
  if (stored.names.size() != want.size()) {
    throw ConfigError(at + ": the file holds " + std::to_string(stored.names.size()) + " weights, the layer takes " +
                      std::to_string(want.size()));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    // An integer scalar is Keras's too: Normalization's count (int64).
    const bool integer_scalar = stored.dtypes[i].find("int") != std::string::npos && want[i].empty();
    if (stored.dtypes[i].rfind("float", 0) != 0 && !integer_scalar) {
      throw ConfigError(at + ": weight '" + stored.names[i] + "' is " + stored.dtypes[i] +
                        " in the file; Keras weights are floating point (float16, float32, float64), or an "
                        "integer scalar");
    }
    if (stored.shapes[i] != want[i]) {
      throw ConfigError(at + ": weight '" + stored.names[i] + "' is declared " + format_sizes(stored.shapes[i]) + " " +
                        stored.dtypes[i] + " in the file; the layer needs " + format_sizes(want[i]) +
                        " (Keras's layout): refused before reading it");
    }
  }
}

// A TF.js manifest names each weight "<layer>/<weight>" (or "<layer>/<cell>/<weight>") and TF.js loads them
// by those names, in any order: `stored` put in the order of the layer's keras_weight_names(). Other files keep
// Keras's own order (weight_names, vars/<i>). Errors: ConfigError naming the file, layer and the weight the
// layer has no such name for, or a name given twice.
KerasLayerWeights in_layer_order(const KerasFile& file, const Layer& layer, const KerasLayerWeights& stored) {
  if (file.kind != "tfjs") return stored;
  const std::vector<std::string> want = layer.keras_weight_names();
  const std::string at = who(file, stored.layer, layer.class_name());
  std::vector<int> slot(stored.names.size(), -1);
  for (size_t j = 0; j < stored.names.size(); ++j) {
    const std::string& n = stored.names[j];
    const std::string own = n.substr(n.find('/') + 1);
    for (size_t i = 0; i < want.size() && slot[j] < 0; ++i) {
      const bool match =
          own == want[i] || (own.size() > want[i].size() &&
                             own.compare(own.size() - want[i].size() - 1, std::string::npos, "/" + want[i]) == 0);
      if (match) slot[j] = static_cast<int>(i);
    }
    std::string names;
    for (const auto& w : want) names += (names.empty() ? "" : ", ") + w;
    if (slot[j] < 0) throw ConfigError(at + ": weight '" + n + "' is none of the layer's (" + names + ")");
    for (size_t k = 0; k < j; ++k)
      if (slot[k] == slot[j]) throw ConfigError(at + ": weight '" + want[slot[j]] + "' is given twice");
  }
  if (stored.names.size() != want.size()) return stored;  // check_declared names the count
  KerasLayerWeights out = stored;
  for (size_t j = 0; j < slot.size(); ++j) {
    const auto i = static_cast<size_t>(slot[j]);
    out.names[i] = stored.names[j];
    out.paths[i] = stored.paths[j];
    out.shapes[i] = stored.shapes[j];
    out.dtypes[i] = stored.dtypes[j];
  }
  return out;
}

bool flips_kernels(const KerasFile& file, const KerasImportOptions& options, bool channels_first) {
  if (file.keras_major() != 1) return false;  // Keras 2's Theano backend convolves without the flip
  std::string backend = !options.keras1_backend.empty() ? options.keras1_backend : file.backend;
  if (backend.empty()) backend = channels_first ? "theano" : "tensorflow";
  if (backend != "theano" && backend != "tensorflow") {
    throw ConfigError(file.path + ": unknown Keras 1 backend \"" + backend + "\" (theano or tensorflow)");
  }
  return backend == "theano";
}

// Each weighted layer of the config with the file's weights for it, every declared shape checked against
// the built layer (check_declared) and every layer of the file matched, before anything is read.
std::vector<KerasLayerWeights> checked_layers(const KerasFile& file, const std::vector<json>& layers,
                                              const LayerLookup& get_layer, bool keras1_th) {
  std::vector<KerasLayerWeights> checked;
  for (const json& spec : layers) {
    const std::string cls = spec.value("class_name", "");
    const std::string name = spec["config"].value("name", "");
    if (cls == "InputLayer") continue;
    const KerasLayerWeights* stored = file.find(name);
    std::shared_ptr<Layer> layer = get_layer(name);
    if (!stored) {
      if (layer->count_params() > 0)
        throw ConfigError(who(file, name, cls) + " has weights but the file holds none for it");
      continue;
    }
    checked.push_back(in_layer_order(file, *layer, *stored));
    check_declared(file, *layer, checked.back(), keras1_th);
  }
  if (checked.size() != file.weights.size()) {
    for (const auto& w : file.weights) {
      bool found = false;
      for (const auto& spec : layers) found = found || spec["config"].value("name", "") == w.layer;
      if (!found) throw ConfigError(file.path + ": weights for layer '" + w.layer + "', which the model config lacks");
    }
  }
  return checked;
}

}  // namespace

void load_keras_weights(const KerasFile& file, const LayerLookup& get_layer, const KerasImportOptions& options) {
  const auto layers = keras_config_layers(file.model_config);
  const bool channels_first = keras_model_is_channels_first(file.model_config);
  const bool keras1_th = file.keras_major() == 1 && channels_first;
  const bool flip = flips_kernels(file, options, channels_first);
  for (const KerasLayerWeights& stored : checked_layers(file, layers, get_layer, keras1_th)) {
    std::vector<at::Tensor> values;  // one layer's data held at a time
    for (size_t i = 0; i < stored.names.size(); ++i) values.push_back(file.read_weight(stored, i));
    try {
      get_layer(stored.layer)->set_keras_weights(values, KerasWeightOptions{keras1_th, flip});  // its own layout
    } catch (const ConfigError& e) {
      throw ConfigError(file.path + ": " + e.what());
    }
  }
}

bool keras_model_is_channels_first(const json& keras_model_config) {
  const auto layers = keras_config_layers(keras_model_config);
  return keras_config::keras1_channels_first(json(layers));
}

Model build_keras_model(const KerasFile& file, const std::optional<InputSize>& input_size) {
  try {
    return model_from_json(file.model_config, input_size);
  } catch (const ConfigError& e) {
    throw ConfigError(file.path + ": " + e.what());
  }
}

namespace {

// The most bytes a .keras zip's model.weights.h5 can take for `model`: its weights and buffers in float64
// with up to seven optimizer slots each (Adam's two, EMA, …), and HDF5's bookkeeping (1 MiB, 64 KiB a layer).
uint64_t weights_budget(ModelImpl& model, size_t layers) {
  uint64_t elements = 0;
  for (const auto& p : model.named_parameters(true)) elements += static_cast<uint64_t>(p.value().numel());
  for (const auto& b : model.named_buffers(true)) elements += static_cast<uint64_t>(b.value().numel());
  return elements * 8 * 8 + (uint64_t{1} << 20) + (uint64_t{64} << 10) * layers;
}

}  // namespace

Model load_keras_model(const std::string& path, const std::string& architecture_json, const KerasImportOptions& options,
                       TorchfitMetadata* torchfit) {
  Model model = nullptr;  // built from the architecture before any weight is read, to bound the weights
  const KerasFile file = read_keras_file(path, architecture_json, [&](const KerasFile& architecture) {
    model = build_keras_model(architecture, options.input_size);
    return weights_budget(*model, keras_config_layers(architecture.model_config).size());
  });
  if (!model) model = build_keras_model(file, options.input_size);
  load_keras_weights(
      file, [&](const std::string& n) { return model->get_layer(n); }, options);
  model->eval();
  if (torchfit) *torchfit = file.torchfit;
  return model;
}

}  // namespace torchfit::keras
