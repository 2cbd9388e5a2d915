#pragma once
/// @file model_json.h
/// torchfit's own model JSON, as ModelImpl::to_json() writes it, read back without any Keras translation
/// (checkpoints and run folders use this). Keras's JSON (Keras 1/2/3 configs, a Keras file's model_config)
/// goes through model_from_json (keras/keras_json.h), which translates it into this form first.
#include <nlohmann/json.hpp>

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
Model model_from_config(const nlohmann::json& json);

}  // namespace torchfit
