#pragma once
/// @file losses.h
/// Keras losses, computed in a numerically stable way.
#include <ATen/ATen.h>
#include <string>

namespace torchfit {

/// Mean loss over the batch.
///
/// `output` is what the model produced: when `from_logits` is true it is the last layer BEFORE its
/// softmax/sigmoid (Sequential::forward_logits), and the loss goes through log_softmax /
/// binary_cross_entropy_with_logits (logits [1000, 0] with target class 1 ⇒ loss ≈ 1000, finite).
/// Otherwise the probabilities follow Keras 2.x's backend formulas (epsilon 1e-7):
/// - categorical: p = output / sum(output), clipped to [eps, 1 − eps]; −Σ target · log p.
/// - sparse categorical: clipped to [eps, 1 − eps], then −log(p_y / Σ p) (Keras feeds log p to a
///   softmax cross-entropy), so outputs that do not sum to 1 are normalised too.
/// - binary: clipped to [eps, 1 − eps]; −(y log(p + eps) + (1 − y) log(1 − p + eps)), averaged.
/// E.g. four sigmoid outputs of 0.5 with a one-hot target give ln 4 = 1.3863 (categorical and sparse).
/// Targets: categorical (N, K) one-hot float; sparse (N) int64; binary (N, 1) or (N) float; mse any shape.
/// Errors: ConfigError for an unknown name or a target of the wrong shape (naming both shapes).
at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits);

/// The loss with Keras's class weights (fit(class_weight=…)): each sample's loss times the weight of its
/// class (the target's argmax; the 0/1 label for binary; the index for sparse), then the batch's sum
/// divided by the batch size (Keras's "sum_over_batch_size" reduction; not by the sum of the weights).
/// `class_weight`: (K) float, one weight per class. Same formulas per sample as compute_loss.
/// Errors: as compute_loss; ConfigError for a class index outside the weights (naming both).
at::Tensor compute_weighted_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target,
                                 bool from_logits, const at::Tensor& class_weight);

/// True when the loss can use logits of a model whose last activation is `activation`
/// (softmax with categorical/sparse cross-entropy, sigmoid with binary cross-entropy).
bool loss_uses_logits(const std::string& loss, const std::string& activation);

/// Throws ConfigError when `name` is not a known loss.
void check_loss(const std::string& name);

}  // namespace torchfit
