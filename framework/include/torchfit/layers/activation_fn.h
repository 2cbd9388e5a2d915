#pragma once
/// @file activation_fn.h
/// Named activation functions as Keras 3 spells and defines them (keras/src/activations/activations.py):
///
/// | name | f(x) |
/// |---|---|
/// | `linear` | x |
/// | `relu` | max(x, 0) |
/// | `relu6` | min(max(x, 0), 6) |
/// | `leaky_relu` | x for x ≥ 0, 0.2·x otherwise (Keras 3's activations.leaky_relu default negative_slope 0.2; the
/// LeakyReLU *layer* defaults to 0.3) | | `elu` | x for x > 0, exp(x) − 1 otherwise (alpha 1) | | `selu` | scale·elu(x,
/// alpha), scale 1.05070098735548049342, alpha 1.67326324235437728482 | | `gelu` | 0.5·x·(1 + erf(x/√2)) (exact, Keras
/// approximate=False; Keras's tanh approximation has no name) | | `silu`, `swish` | x·sigmoid(x) | | `hard_sigmoid` |
/// relu6(x + 3) / 6 (Keras 3; tf.keras 2 used max(0, min(1, 0.2·x + 0.5)) — torchfit follows Keras 3) | | `hard_silu`,
/// `hard_swish` | x·hard_sigmoid(x) | | `sigmoid` | 1 / (1 + exp(−x)) | | `tanh` | tanh(x) | | `softplus` | log(exp(x)
/// + 1) | | `softsign` | x / (|x| + 1) | | `mish` | x·tanh(softplus(x)) | | `softmax` | exp(x) / Σ exp(x) over Keras
/// axis −1: the channels of an image (tensor dim 1), the last dim otherwise | | `log_softmax` | x − log Σ exp(x), over
/// the same axis as softmax | | `exponential` | exp(x) |
#include <ATen/ATen.h>
#include <string>
#include <vector>

namespace torchfit {

/// Names accepted wherever an `activation` argument is taken (sorted; the table above).
const std::vector<std::string>& activation_names();

/// Throws ConfigError naming `where` (e.g. the layer) and listing the known names when `name` is not a
/// known activation.
void check_activation(const std::string& name, const std::string& where);

/// Applies the activation. softmax and log_softmax are over dim 1 of an image (N, C, H, W) and the last dim
/// otherwise ((N, D): the features). `inplace` lets relu/sigmoid/tanh overwrite x when autograd allows it (x
/// is a fresh intermediate); the others always return a new tensor.
at::Tensor apply_activation(const std::string& name, const at::Tensor& x, bool inplace = false);

}  // namespace torchfit
