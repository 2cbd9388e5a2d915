#pragma once
/// @file metrics.h
/// Keras accuracy metrics, evaluated per batch as a sum of per-sample scores (running means are the
/// trainer's job).
#include <ATen/ATen.h>
#include <string>

namespace torchfit {

/// The metric a user name resolves to: "accuracy"/"acc" → categorical_accuracy,
/// sparse_categorical_accuracy or binary_accuracy depending on the loss (as Keras); other names as given.
/// Errors: ConfigError for unknown metric names.
std::string resolve_metric(const std::string& name, const std::string& loss);

/// Sum over the batch of the per-sample metric (e.g. number of correct predictions). `output` may be
/// logits or probabilities (argmax and top-k are the same; binary uses 0 on logits / 0.5 on probabilities,
/// given by `from_logits`). top_k_categorical_accuracy uses k = 5 (Keras default).
double metric_sum(const std::string& resolved, const at::Tensor& output, const at::Tensor& target, bool from_logits);

}  // namespace torchfit
