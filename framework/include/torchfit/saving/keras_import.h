#pragma once
/// @file keras_import.h
/// Keras models in: a Keras model config translated to torchfit layers, and Keras's weights copied into
/// them in torchfit's layout (docs/keras_import.md has the formats, layers, mapping and what is refused).
///
///   auto model = torchfit::saving::load_keras_sequential("mnist.keras");   // or .h5, or weights + JSON
///   at::Tensor probs = model->forward(x);                                  // x (N, C, H, W)
///
/// Building the model is one call: build_keras_sequential() today (Sequential configs); a functional
/// Model's Keras reader takes its place for functional configs, and load_keras_weights() fills either,
/// finding layers by name.
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/layers/layer.h>
#include <torchfit/model/sequential.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/saving/keras_file.h>

namespace torchfit::saving {

/// How a Keras file's layers are read: what Keras's config and file say, with the one thing Keras 1
/// weights files do not record.
struct KerasImportOptions {
  /// The backend a Keras 1 model was trained with when the file does not say (save_weights files):
  /// "theano" (the Keras 1 default with dim_ordering "th": its convolutions flip the kernel, so
  /// kernels are flipped on import) or "tensorflow" (no flip). "" (default): the file's `backend`
  /// attribute, else "theano" for a "th"-ordered Keras 1 model and "tensorflow" otherwise.
  std::string keras1_backend;
};

/// torchfit's Sequential JSON (SequentialImpl::from_json) for a Keras Sequential config of Keras 1.x,
/// 2.x or 3.x: Keras 1 arguments renamed (Convolution2D nb_filter/nb_row/nb_col/subsample/border_mode,
/// Dense output_dim, Dropout p, bias), the input shape taken from InputLayer/batch_input_shape/
/// batch_shape (channels_first (C, H, W) turned into (H, W, C)), ReLU as Activation("relu").
/// Arguments that do not change inference (initializers, regularizers, constraints, dtype, trainable)
/// are dropped. `file` names the source in errors. Errors: ConfigError naming the file, the layer and
/// its class for a class torchfit lacks, or an argument value it cannot honour (groups > 1,
/// padding "causal", a BatchNormalization axis other than the channels, ReLU with max_value, …).
/// A functional config ("Functional", "Model") whose layers form one chain (one input, each layer fed
/// by the one before it, the last one the output: DS-CNN, MobileNetV1) is read as the same Sequential.
nlohmann::json keras_sequential_to_json(const nlohmann::json& keras_model_config, const std::string& file);

/// Whether a Keras model config is channels_first (a Keras 1 layer with dim_ordering "th", a Keras 2+
/// layer with data_format "channels_first"): its shapes are (C, H, W).
bool keras_model_is_channels_first(const nlohmann::json& keras_model_config);

/// The names of the layers whose outputs a functional model's layer takes (its `inbound_nodes`: Keras 2
/// [[["name", 0, 0, {}]]], Keras 3 {"args": [{"config": {"keras_history": ["name", 0, 0]}}]}); none for
/// a Sequential's layers and InputLayers.
std::vector<std::string> keras_inbound_layers(const nlohmann::json& layer_spec);

/// Builds a Sequential for `file`'s config (keras_sequential_to_json + from_json) without its weights.
/// Errors: ConfigError for a functional config (it needs the functional Model) or as above.
Sequential build_keras_sequential(const KerasFile& file);

/// Looks up a layer by its Keras name in the built model (Sequential::get_layer, Model::get_layer).
using LayerLookup = std::function<std::shared_ptr<Layer>(const std::string&)>;

/// Copies `file`'s weights into the built model's layers, found by name, converted to torchfit's
/// layout: Conv2D kernels (kh, kw, in, out) → (out, in, kh, kw) (Keras 1 "th" kernels are (out, in,
/// kh, kw) already; Theano-trained ones are flipped in both spatial axes); DepthwiseConv2D (kh, kw,
/// in, mult) → (in·mult, 1, kh, kw); Dense (in, out) → (out, in), its input rows reordered from
/// Keras's (H, W, C) flattening to torchfit's (C, H, W) when it follows a Flatten of a 3-D input;
/// BatchNormalization's gamma, beta (each only when scale/center) and moving mean/variance.
/// Errors: ConfigError naming the file, the layer and its class for a layer whose weights torchfit
/// cannot map, a weight count or shape that does not match the layer, a layer with weights the model
/// lacks, or a model layer with weights the file lacks.
void load_keras_weights(const KerasFile& file, const LayerLookup& get_layer, const KerasImportOptions& options = {});

/// read_keras_file + build_keras_sequential + load_keras_weights: a Keras Sequential model with its
/// weights, in inference mode (eval()). Errors: as those three.
Sequential load_keras_sequential(const std::string& path, const std::string& architecture_json = "",
                                 const KerasImportOptions& options = {});

/// A model from a torchfit checkpoint (saving::load_model) or, for a path is_keras_file() accepts, a
/// Keras file (load_keras_sequential; `architecture_json` for a weights-only .h5). For a Keras file
/// `info` (when given) gets the torchfit model config and no class names. The model is in eval().
/// Errors: as load_model and load_keras_sequential; ConfigError for an architecture with a checkpoint.
Model load_checkpoint_or_keras(const std::string& path, const std::string& architecture_json = "",
                               CheckpointInfo* info = nullptr);

}  // namespace torchfit::saving
