#pragma once
// Keras layer configs → torchfit layer configs (model_from_json): Keras-only keys checked and dropped,
// Keras 1 argument names renamed. Private to model/.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchfit::keras_config {

/// What reading a model's layers found beyond the layers themselves.
struct Findings {
  std::string dtype_policy;  // a mixed policy named by the layers' "dtype", else ""
};

/// Whether a model's layers (Keras specs) are Keras 1 "th"-ordered (a layer with dim_ordering "th"): their
/// shapes are (C, H, W), Flatten runs in (C, H, W) order and BatchNormalization's axis counts over (N, C, H, W).
bool keras1_channels_first(const nlohmann::json& layer_specs);

/// {"class_name", "config", …} as Keras writes it (2.x, 1.x, 3.x) → {"class_name", "config"} that
/// layer_from_json reads. `channels_first`: the model is Keras 1 "th"-ordered (keras1_channels_first):
/// input shapes (C, H, W) become (H, W, C). Arguments that do not change the computation are dropped
/// (constraints and regularizers that are null; renorm,
/// fused, synchronized when false/null); Keras 1 names renamed (Convolution2D, nb_filter, nb_row/nb_col,
/// subsample, border_mode, atrous_rate, output_dim, p, bias, init (→ kernel_initializer, which the layer
/// applies like every "<weight>_initializer"), W_regularizer, BatchNormalization mode 0);
/// BatchNormalization/LayerNormalization center and scale given as 0/1 read as false/true; Keras 3's
/// LeakyReLU negative_slope read as alpha; an `activation` serialized as a function ({"module":
/// "keras.activations", "class_name": "function", "config": "relu", …}) read as its name; PReLU's
/// shared_axes given as one int read as a list. Errors: ConfigError naming the layer and class (unsupported
/// class, with the supported ones; regularizer, constraint, custom object, data_format, dtype, or an
/// argument whose value torchfit cannot honour: another activation object, ThresholdedReLU theta null, renorm,
/// Keras 1 BatchNormalization modes 1 and 2, a Reshape in a "th" model).
nlohmann::json layer_spec(const nlohmann::json& spec, Findings& findings, bool channels_first = false);

}  // namespace torchfit::keras_config
