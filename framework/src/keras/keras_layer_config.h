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

/// One sublayer that holds a Keras 3 layer's variables in its .weights.h5 (/layers/<key>/<attribute>/vars):
/// its attribute name there, and the prefix of its weights in the layer's keras_weight_names (tf.keras 2's
/// "<layer>/<prefix>/kernel:0").
struct WeightChild {
  std::string attribute;
  std::string prefix;
};
/// The sublayers of class `cls` that hold its variables, in the order of its Keras weights (empty: the
/// layer's own vars): MultiHeadAttention's query_dense, key_dense, value_dense and output_dense
/// (Keras 3's properties, saved before the private attributes); GroupQueryAttention's _query_dense,
/// _key_dense, _value_dense and _output_dense (its private attributes; Keras's h5 lists them sorted).
const std::vector<WeightChild>& keras3_weight_children(const std::string& cls);

}  // namespace torchfit::keras_config
