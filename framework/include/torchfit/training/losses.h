#pragma once
/// @file losses.h
/// Keras losses (keras.losses, keras/src/losses/losses.py), computed in a numerically stable way.
#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace torchfit {

/// A Keras loss: its class and arguments, as compile(loss=…) and a compile_config name it — a name
/// ("mse", "huber", "categorical_crossentropy", "CategoricalCrossentropy") or {"class_name": "Huber",
/// "config": {"delta": 2.0}}.
///
/// Classes (Keras 3's arguments and defaults; y the target, p the model's output, ε = 1e-7; each value is
/// over the last Keras axis — a held image (N, C, H, W) has its channels on axis 1 — unless said):
/// - MeanSquaredError (mse): mean (y − p)²; MeanAbsoluteError (mae): mean |y − p|;
///   MeanAbsolutePercentageError (mape): 100 · mean |y − p| / max(|y|, ε); MeanSquaredLogarithmicError
///   (msle): mean (log(max(p, ε) + 1) − log(max(y, ε) + 1))².
/// - CosineSimilarity(axis −1): −Σ ŷ·p̂, x̂ = x / √max(Σx², ε²).
/// - Huber(delta 1.0): mean of ½e² where |e| ≤ delta, else delta·|e| − ½delta² (e = p − y).
/// - LogCosh: mean e + softplus(−2e) − log 2.
/// - Hinge, SquaredHinge: mean max(1 − y·p, 0) (squared), labels in {0, 1} read as {−1, 1};
///   CategoricalHinge: max(max((1 − y)·p) − Σ y·p + 1, 0).
/// - KLDivergence (kld): Σ y'·log(y'/p'), both clipped to [ε, 1]; Poisson: mean p − y·log(p + ε).
/// - BinaryCrossentropy(from_logits false, label_smoothing 0, axis −1), CategoricalCrossentropy(same),
///   SparseCategoricalCrossentropy(from_logits false, ignore_class null): y smoothed to y(1 − s) + s/2
///   (binary) or y(1 − s) + s/K; on probabilities Keras 2.x's backend formulas (compute_loss below);
///   ignore_class: those targets give 0 and the mean is over the others (Keras's mask).
/// - BinaryFocalCrossentropy(apply_class_balancing false, alpha 0.25, gamma 2.0, from_logits, label_smoothing):
///   mean (1 − p_t)^gamma · bce, times alpha·y + (1 − alpha)(1 − y) when balancing, p_t = y·p + (1 − y)(1 − p).
/// - CategoricalFocalCrossentropy(alpha 0.25, gamma 2.0, from_logits, label_smoothing):
///   Σ alpha·(1 − p)^gamma · (−y log p), p normalised and clipped to [ε, 1 − ε].
/// - Dice(axis null): 1 − 2Σy·p / (Σy + Σp + ε); Tversky(alpha 0.5, beta 0.5, axis null):
///   1 − Σp·y / (Σp·y + alpha·Σ(1 − y)·p + beta·Σy·(1 − p) + ε); axis null sums over the whole batch.
/// Every class takes `reduction` (sum_over_batch_size (default) = Σ values / their count, "mean" the same,
/// "sum", "mean_with_sample_weight" = Σ w·values / Σ w) and `name`, `dtype` (read, float32).
struct Loss {
  /// The Keras 3 class name ("CategoricalCrossentropy", "Huber" …).
  std::string class_name;
  /// Its arguments as given (missing ones take Keras's defaults).
  nlohmann::json config = nlohmann::json::object();

  /// Reads a name or {"class_name", "config"}. Errors: ConfigError for an unknown loss (listing the known
  /// names), an argument the class does not take, a value of the wrong type or range (label_smoothing
  /// outside [0, 1], delta ≤ 0, gamma < 0, an unknown reduction, "none" which fit cannot train on).
  static Loss from_json(const nlohmann::json& spec);
  /// from_json of a name or of JSON text (starting with '{'), as CompileOptions::loss holds it.
  static Loss parse(const std::string& text);
  /// {"class_name": …, "config": {…}}.
  nlohmann::json to_json() const;
  /// Keras's function name of the class: "categorical_crossentropy", "huber", "mean_squared_error" …
  std::string keras_name() const;
  /// The config's from_logits (false for classes without it).
  bool from_logits() const;

  /// Keras's Loss.call: the values before the reduction — (N) for outputs (N, K), (N, T) for (N, T, K),
  /// a scalar for Dice/Tversky with axis null. `logits`: the output is before its softmax/sigmoid (the
  /// config's from_logits, or the trainer feeding the last layer's logits). Errors: ConfigError naming the
  /// loss and both shapes for a target that does not fit the output.
  at::Tensor values(const at::Tensor& output, const at::Tensor& target, bool logits) const;
  /// The entries that count (SparseCategoricalCrossentropy's targets ≠ ignore_class); undefined = all.
  at::Tensor valid_mask(const at::Tensor& target) const;
  /// The reduction of `values`; `sample_weight` (N) (undefined = none) weighs each sample; `valid`
  /// (valid_mask) divides sum_over_batch_size by the valid entries' count (+ `epsilon`: Keras's 1e-7 for an
  /// output's mask), as Keras's mask.
  at::Tensor reduce(const at::Tensor& values, const at::Tensor& sample_weight = {}, const at::Tensor& valid = {},
                    double epsilon = 0.0) const;
};

/// The Keras names Loss::from_json takes (sorted).
std::vector<std::string> loss_names();

/// Mean loss over the batch: Loss::parse(name), its values and reduction.
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
/// Targets: categorical (N, K) one-hot float; sparse (N) int64; binary (N, 1) or (N) float; others the
/// output's shape. Errors: ConfigError for an unknown name or a target of the wrong shape (naming both shapes).
at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits);

/// compute_loss with Keras's sample weights (fit(sample_weight=…); keras/src/losses/loss.py
/// reduce_weighted_values): the loss's values (per sample, or per sample and step for (N, T, K) outputs)
/// times `sample_weight` ((N), or (N, 1); undefined = unweighted), then the loss's reduction — for the default
/// sum_over_batch_size Σ w·v / (number of values), NOT / Σ w (that is "mean_with_sample_weight"); "sum": Σ w·v.
/// Weights (N) for values (N, T) weigh each step of their sample. `mask`: the output's Keras mask (N, T) (Embedding
/// mask_zero, Masking; Model::output_masks), as Keras 3's apply_mask: masked values count 0 and
/// sum_over_batch_size divides by the kept values' count (+ 1e-7), not by all. Errors: as compute_loss;
/// ConfigError when sample_weight's length is not the batch's or the mask's shape is not the values'.
at::Tensor compute_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target, bool from_logits,
                        const at::Tensor& sample_weight, const at::Tensor& mask = {});

/// Keras's class_weight_to_sample_weights (keras/src/trainers/data_adapters/data_adapter_utils.py): each
/// sample's weight is its class's — the class being the target's argmax (one-hot), the 0/1 label (binary)
/// or the index (sparse). `class_weight`: (K) float, one weight per class. Returns (N) float32.
/// Errors: ConfigError for an unknown loss or a class index outside the weights (naming both).
at::Tensor class_sample_weight(const std::string& name, const at::Tensor& target, const at::Tensor& class_weight);

/// The loss with Keras's class weights (fit(class_weight=…)): compute_loss with class_sample_weight as the
/// sample weights — each sample's loss times its class's weight, the batch's sum divided by the batch size
/// (Keras's "sum_over_batch_size" reduction; not by the sum of the weights).
/// Errors: as compute_loss; ConfigError for a class index outside the weights (naming both).
at::Tensor compute_weighted_loss(const std::string& name, const at::Tensor& output, const at::Tensor& target,
                                 bool from_logits, const at::Tensor& class_weight);

/// True when the loss can use logits of a model whose last activation is `activation` (softmax with
/// categorical/sparse (focal) cross-entropy, sigmoid with binary (focal) cross-entropy) and its config does
/// not already say from_logits.
bool loss_uses_logits(const std::string& loss, const std::string& activation);

/// Throws ConfigError when `name` is not a loss Loss::parse reads.
void check_loss(const std::string& name);

}  // namespace torchfit
