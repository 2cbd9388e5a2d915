#pragma once
/// @file keras_json.h
/// Models from JSON: torchfit's own (Sequential and functional) and Keras's model.to_json() / the
/// `model_config` of a Keras file: tf.keras 2.x ("Functional"/"Model" with inbound_nodes lists,
/// input_layers/output_layers; "Sequential" with an InputLayer first), Keras 1/2.0 (Sequential config as
/// a bare list, batch_input_shape on the first layer) and Keras 3 (module/registered_name, batch_shape,
/// inbound_nodes as args/kwargs with keras_history).
#include <string>

#include <nlohmann/json.hpp>

#include <torchfit/model/model.h>

namespace torchfit {

/// Builds the model a parsed Keras (or torchfit) model JSON describes: {"class_name": "Functional" |
/// "Model" | "Sequential", "config": …}. Layer names are kept, so weights map by
/// `model->get_layer(name)`. Keras-only keys are checked and dropped: "dtype" (float32 or a mixed policy
/// name), "trainable" (kept: Layer::set_trainable), initializers (by name), null regularizers/constraints,
/// data_format "channels_last", Keras 3's module/registered_name/build_config.
/// Errors: ConfigError naming the layer and class for an unsupported class (listing the supported ones),
/// regularizer, constraint or custom object, and naming the layers of a cycle or a missing reference.
Model model_from_json(const nlohmann::json& json);
/// The same from JSON text; `source` (a file name) prefixes parse errors.
Model model_from_json_text(const std::string& text, const std::string& source = "");

}  // namespace torchfit
