#pragma once
/// @file keras_json.h
/// Models from JSON: torchfit's own (Sequential and functional) and Keras's model.to_json() / the
/// `model_config` of a Keras file: tf.keras 2.x ("Functional"/"Model" with inbound_nodes lists,
/// input_layers/output_layers; "Sequential" with an InputLayer first), Keras 1/2.0 (Sequential config as
/// a bare list, batch_input_shape on the first layer) and Keras 3 (module/registered_name, batch_shape,
/// inbound_nodes as args/kwargs with keras_history).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/layers/input_layer.h>
#include <torchfit/model/model.h>

namespace torchfit {

/// Builds the model a parsed Keras (or torchfit) model JSON describes: {"class_name": "Functional" |
/// "Model" | "Sequential", "config": …}. Layer names are kept, so weights map by
/// `model->get_layer(name)`. Keras-only keys are checked and dropped: "dtype" (float32 or a mixed policy
/// name), "trainable" (kept: Layer::set_trainable), null regularizers/constraints,
/// data_format "channels_last", Keras 3's module/registered_name/build_config. Initializers ("<weight>_initializer")
/// are kept and applied when the layer is built (Layer::set_initializer).
/// Errors: ConfigError naming the layer and class for an unsupported class (listing the supported ones),
/// regularizer, constraint or custom object, and naming the layers of a cycle or a missing reference.
///
/// An image input whose height and width Keras left unknown (`batch_input_shape` [null, null, null, 3], a
/// fully convolutional model) is built at `input_size` (H, W) and remembers which axes were unknown
/// (InputLayerOptions::unknown_axes): the model then takes other sizes where its layers allow it, and
/// to_json writes null again. Errors: ConfigError naming the input layer when a size is unknown and
/// `input_size` is not given, or when the channel axis is unknown.
Model model_from_json(const nlohmann::json& json, const std::optional<InputSize>& input_size = std::nullopt);
/// The same from JSON text; `source` (a file name) prefixes parse errors.
Model model_from_json_text(const std::string& text, const std::string& source = "",
                           const std::optional<InputSize>& input_size = std::nullopt);

}  // namespace torchfit
