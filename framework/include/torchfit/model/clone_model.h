#pragma once
/// @file clone_model.h
/// clone_model and adapt_to_data: a model's graph made again with other input shapes or other layers
/// (keras.models.clone_model), and the one routine that fits a classifier to the data it trains on.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/arg.h>

#include <torchfit/model/model.h>

namespace torchfit {

/// Options of clone_model.
struct CloneModelOptions {
  /// Per-sample shapes (Keras order, (H, W, C) or (D), batch excluded) of the clone's inputs, one per
  /// model input in inputs() order. Empty (default): the model's own input shapes.
  TORCH_ARG(std::vector<Shape>, input_shapes) = {};
  /// Makes the clone of one layer (called once per layer, so a shared layer stays shared). Default
  /// (empty): a new layer of the same class from its config (layer_from_json of {class_name, config()}),
  /// with new weights — Keras's default clone_function.
  TORCH_ARG(std::function<std::shared_ptr<Layer>(const Layer&)>, clone_function) = nullptr;
};

/// keras.models.clone_model(model, input_tensors=Input(shape) per input, clone_function=…): the same graph
/// of new layers, built for `options.input_shapes`. Layers are called in the order model_from_config
/// builds them (layers() order, each layer's calls in turn as their inputs become available), so a clone
/// draws the initial weights a model built directly from the same config would. Names, the dtype policy
/// and the memory format are kept; a Sequential gives a Sequential (its first layer declares the new input
/// shape), any other graph a Model. Input layers keep their names and unknown axes.
/// Errors: ConfigError for a wrong number of input shapes, a clone_function returning nullptr, or a layer
/// that cannot be built at the new shapes (naming it, as Model's constructor and Sequential::add do).
Model clone_model(const ModelImpl& model, const CloneModelOptions& options = {});

/// What adapt_to_data fits a classifier to.
struct AdaptToDataOptions {
  /// The per-sample shape the data feeds, Keras order ((H, W, C)). Empty: the model's input is kept.
  TORCH_ARG(Shape, input_shape) = {};
  /// The number of classes in the data (>= 1); 0: the head is kept.
  TORCH_ARG(int64_t, classes) = 0;
  /// The model's weights are new (an architecture read from a config): a different input shape or number of
  /// classes is made by clone_model (input layers at `input_shape`; the class-score Dense, class_scores_node,
  /// with `classes` units). false (default, trained weights): either difference is a ConfigError instead.
  TORCH_ARG(bool, architecture_only) = false;
  /// Replace the classification head by a new Dense(classes, softmax) named "new_head" (with_new_head).
  TORCH_ARG(bool, new_head) = false;
  /// Freeze every layer but the head (freeze_all_but_head), after new_head.
  TORCH_ARG(bool, freeze_base) = false;
};

/// Keras's recipes for training a given model on a new image folder, as one call on the built graph:
/// with `architecture_only`, the input shape and the class-score Dense's units follow the data (each change
/// said in `changes`, e.g. "input_shape [150,150,3] -> [64,64,3]", "last Dense layer 'dense_2' units 8 ->
/// 10"); then `new_head`, then `freeze_base` ("N layers frozen"). Returns `model` itself when nothing
/// changes. Errors (ConfigError, naming the layer or the shapes): a model with several inputs or outputs;
/// an input shape other than the data's (trained weights); an output that is not (classes) once adapted —
/// no Dense makes the class scores (the output layer is named), or trained weights with other classes (the
/// message says how many each has); classes < 1 with new_head.
Model adapt_to_data(const Model& model, const AdaptToDataOptions& options, std::vector<std::string>* changes = nullptr);

}  // namespace torchfit
