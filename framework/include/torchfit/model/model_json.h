#pragma once
/// @file model_json.h
/// torchfit's own model JSON, as ModelImpl::to_json() writes it, read back without any Keras translation
/// (checkpoints and run folders use this). Keras's JSON (Keras 1/2/3 configs, a Keras file's model_config)
/// goes through model_from_json (keras/keras_json.h), which translates it into this form first.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <torchfit/layers/input_layer.h>
#include <torchfit/model/model.h>

namespace torchfit {

/// Builds the model of torchfit's own JSON:
/// - {"class_name": "Sequential", "config": {"name", "layers": [{"class_name", "config"}, …], "dtype_policy"}}
///   (SequentialImpl::from_json), or
/// - {"class_name": "Functional", "config": {"name", "layers": [{"class_name", "config", "name",
///   "inbound_nodes": [[[layer, node, 0, {}], …], …]}, …], "input_layers": [[layer, node, 0], …],
///   "output_layers": […], "dtype_policy"}} — layers in any order, each node made once its inputs exist.
/// Layer configs are torchfit's (registry.h, layer_from_json); layer names are kept.
/// Errors: ConfigError naming the layer for an unknown class or a bad field, two layers of one name, a
/// bad tensor reference, and the layers of a cycle or a missing reference.
///
/// An image input whose height and width are unknown (`batch_input_shape` [null, null, null, 3], a fully
/// convolutional model) is built at `input_size` (H, W) and remembers which axes were unknown
/// (InputLayerOptions::unknown_axes): the model then takes other sizes where its layers allow it, and
/// to_json writes null again. Errors: ConfigError naming the input layer when a size is unknown and
/// `input_size` is not given, or when the channel axis is unknown.
Model model_from_config(const nlohmann::json& json, const std::optional<InputSize>& input_size = std::nullopt);

namespace detail {
/// A tensor reference of a model JSON: [layer name, node index, tensor index] (an inbound entry
/// [name, n, t, kwargs] or an endpoint [name, n, t]).
struct TensorRef {
  std::string layer;
  int node = 0;
  int tensor = 0;
};
/// `j` read as a TensorRef. Errors: ConfigError starting with `who` for anything else (indices must be
/// whole numbers in 0..1e9) and for a tensor index other than 0 (torchfit's layers have one output).
TensorRef tensor_ref(const nlohmann::json& j, const std::string& who);
/// Per layer name, the per-sample axes (0-based, batch excluded) a JSON left unknown.
using UnknownAxes = std::map<std::string, std::vector<int64_t>>;
/// Fills the unknown (null) height and width of every declared batch shape (`batch_input_shape`,
/// `batch_shape`) of `json`'s layers with `size`; returns the axes it filled. Errors: as model_from_config.
UnknownAxes fill_unknown_input_sizes(nlohmann::json& json, const std::optional<InputSize>& size);
/// Marks the model's inputs whose sizes the JSON left unknown (a Sequential's first layer stands for its input).
void mark_unknown_input_sizes(ModelImpl& model, const UnknownAxes& unknown);
/// `build` of a copy of `json` whose unknown input sizes are filled with `size`, the built model's inputs
/// marked (model_from_config, and model_from_json before its translation). Errors: as model_from_config.
Model build_with_input_size(const nlohmann::json& json, const std::optional<InputSize>& size,
                            const std::function<Model(const nlohmann::json&)>& build);
}  // namespace detail

}  // namespace torchfit
