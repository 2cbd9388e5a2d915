#pragma once
/// @file keras_import.h
/// Keras models in: a Keras model config translated to torchfit layers, and Keras's weights copied into
/// them in torchfit's layout (docs/keras_import.md has the formats, layers, mapping and what is refused).
///
///   torchfit::Model model = torchfit::keras::load_keras_model("mnist.keras");   // or .h5, or weights + JSON
///   at::Tensor probs = model->forward(x);                                        // x (N, C, H, W)
///
/// One path for every file: the Keras config goes through model_from_json (keras/keras_json.h), which
/// builds Sequential and functional models alike, and load_keras_weights() fills the layers by name.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/keras/keras_file.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/layer.h>
#include <torchfit/model/model.h>

namespace torchfit::keras {

/// How a Keras file's layers are read: what Keras's config and file say, with the one thing Keras 1
/// weights files do not record.
struct KerasImportOptions {
  /// The backend a Keras 1 model was trained with when the file does not say (save_weights files):
  /// "theano" (the Keras 1 default with dim_ordering "th": its convolutions flip the kernel, so
  /// kernels are flipped on import) or "tensorflow" (no flip). "" (default): the file's `backend`
  /// attribute, else "theano" for a "th"-ordered Keras 1 model and "tensorflow" otherwise.
  std::string keras1_backend;
  /// (H, W) to build an image input of unknown size at (Keras `(None, None, C)`, a fully convolutional
  /// model; model_from_json). Unset: such a model is refused naming its input layer.
  std::optional<InputSize> input_size;
};

/// Whether a Keras model config is Keras 1 "th"-ordered (a layer with dim_ordering "th"): its shapes are
/// (C, H, W) and its Flatten runs in (C, H, W) order. (Keras 2+ data_format "channels_first" is refused
/// by model_from_json.)
bool keras_model_is_channels_first(const nlohmann::json& keras_model_config);

/// The model of `file`'s config without its weights: model_from_json (keras/keras_json.h) — Sequential
/// (Keras 1 bare list, 2.x, 3.x) and functional ("Model", "Functional") configs alike, layers named as in
/// the file. Errors: ConfigError prefixed with the file's path, naming the layer and its class.
Model build_keras_model(const KerasFile& file, const std::optional<InputSize>& input_size = std::nullopt);

/// Looks up a layer by its Keras name in the built model (Sequential::get_layer, Model::get_layer).
using LayerLookup = std::function<std::shared_ptr<Layer>(const std::string&)>;

/// Copies `file`'s weights into the built model's layers, found by name, each through the layer's own
/// Keras weight layout (Layer::set_keras_weights, with the file's Keras 1 facts as KerasWeightOptions),
/// converted to torchfit's layout: Conv2D kernels (kh, kw, in, out) → (out, in, kh, kw) (Keras 1 "th" kernels are (out,
/// in, kh, kw) already; Theano-trained ones are flipped in both spatial axes); DepthwiseConv2D (kh, kw, in, mult) →
/// (in·mult, 1, kh, kw); Conv2DTranspose (kh, kw, out, in) → (in, out, kh, kw); SeparableConv2D's depthwise part as
/// DepthwiseConv2D and pointwise (1, 1, in·mult, out) → (out, in·mult, 1, 1); Dense (in, out) → (out, in), rows as
/// stored (torchfit's Flatten gives Keras's (H, W, C) order; a Keras 1 "th" model's Flatten keeps (C, H, W), as Keras 1
/// did); BatchNormalization's gamma, beta (each only when scale/center) and moving mean/variance; LayerNormalization's
/// gamma, beta as they are. Every layer's weights are checked first by what the file declares (count, shape in
/// Keras's layout, floating-point type) against what the built layer needs; only then is anything read, one layer
/// at a time. Errors: ConfigError naming the file, the layer and its class for a layer whose class has no Keras
/// weight layout, a weight count, declared shape or type that does not match the layer (naming the weight and both
/// shapes), a layer with weights the model lacks, or a model layer with weights the file lacks.
void load_keras_weights(const KerasFile& file, const LayerLookup& get_layer, const KerasImportOptions& options = {});

/// read_keras_file + build_keras_model + load_keras_weights: a Keras model (Sequential or functional)
/// with its weights, in inference mode (eval()). The model is built from the architecture before any
/// weight is read, and bounds a .keras zip's weights entry (KerasWeightsBudget: float64, eight values
/// per weight, 1 MiB + 64 KiB a layer). `torchfit`, when given, receives the file's TorchfitMetadata (class
/// names and outside preprocessing torchfit wrote; empty for a file Keras wrote). Errors: as those three.
Model load_keras_model(const std::string& path, const std::string& architecture_json = "",
                       const KerasImportOptions& options = {}, TorchfitMetadata* torchfit = nullptr);

}  // namespace torchfit::keras
