#pragma once
/// @file activation_fn.h
/// Named activation functions as Keras spells them (keras.activations): linear, relu, sigmoid, tanh,
/// softmax, elu (alpha 1.0), gelu (exact erf form, Keras approximate=False).
#include <ATen/ATen.h>
#include <string>
#include <vector>

namespace torchfit {

/// Names accepted wherever an `activation` argument is taken.
const std::vector<std::string>& activation_names();

/// Throws ConfigError naming `where` (e.g. the layer) when `name` is not a known activation.
void check_activation(const std::string& name, const std::string& where);

/// Applies the activation. softmax is over dim 1 (channels/features, tensor order (N, C, ...)).
/// `inplace` lets relu/sigmoid/tanh overwrite x when autograd allows it (x is a fresh intermediate).
at::Tensor apply_activation(const std::string& name, const at::Tensor& x, bool inplace = false);

}  // namespace torchfit
