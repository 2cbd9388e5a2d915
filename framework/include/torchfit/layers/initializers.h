#pragma once
/// @file initializers.h
/// Keras's weight initializers (keras.initializers, keras/src/initializers/*.py): an Initializer names one
/// by its Keras class and arguments, and draws a weight of a Keras shape as Keras 3 does.
#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace torchfit {

/// A Keras initializer: its class and arguments, as a Keras config names it
/// (`"kernel_initializer": {"class_name": "HeNormal", "config": {"seed": null}}` or `"he_normal"`).
///
/// Classes and their arguments (Keras 3's defaults), with `fan_in`, `fan_out` from the Keras shape as
/// Keras's `compute_fans`: a scalar 1, 1; a vector (n) n, n; a matrix (a, b) a, b; a kernel (k…, in, out)
/// in·∏k, out·∏k:
/// - VarianceScaling(scale 1.0 > 0, mode "fan_in" | "fan_out" | "fan_avg", distribution "truncated_normal"
///   (alias "normal") | "untruncated_normal" | "uniform"): s = scale / max(1, fan); truncated normal of
///   stddev √s / 0.87962566103423978 cut at two stddev, a normal of stddev √s, or U(−√(3s), √(3s)).
/// - GlorotUniform, GlorotNormal (scale 1, fan_avg), HeUniform, HeNormal (scale 2, fan_in), LecunUniform,
///   LecunNormal (scale 1, fan_in): VarianceScaling with uniform / truncated_normal.
/// - RandomNormal(mean 0, stddev 0.05), TruncatedNormal(mean 0, stddev 0.05; values beyond two stddev
///   redrawn), RandomUniform(minval −0.05, maxval 0.05).
/// - Orthogonal (Keras 3's OrthogonalInitializer; gain 1.0): the Q of a normal matrix's QR, signs fixed by
///   R's diagonal, over (∏shape[:−1], shape[−1]) (rows orthonormal when there are fewer rows); rank ≥ 2.
/// - Zeros, Ones, Constant(value 0.0), Identity (IdentityInitializer; gain 1.0): gain·eye, 2-D only.
/// Every random class takes `seed` (an integer or null): with an integer the draw comes from a generator
/// seeded with it (the same values every time, as Keras's seeded initializers), else from LibTorch's
/// default generator. The values are not Keras's own (another random generator); the distributions are.
/// Names: the class names above, their snake_case forms, and Keras's aliases ("uniform", "normal",
/// "orthogonal", "one", "zero", "identity").
struct Initializer {
  /// The Keras 3 class name ("HeNormal", "Orthogonal" for OrthogonalInitializer, "Identity" …).
  std::string class_name;
  /// Its arguments, as Keras writes them ({"seed": null} …); missing ones take Keras's defaults.
  nlohmann::json config = nlohmann::json::object();

  /// Reads a Keras spec: a name ("he_normal", "HeNormal") or {"class_name": …, "config": {…}} (Keras 3 adds
  /// "module" and "registered_name"; they are not needed). `who` names the place in errors
  /// ("layer 'dense' (Dense): kernel_initializer"). Errors: ConfigError for an unknown class (listing the
  /// known ones), an argument of the wrong type, scale ≤ 0, an unknown mode or distribution, stddev < 0,
  /// minval > maxval.
  static Initializer from_json(const nlohmann::json& spec, const std::string& who);
  /// {"class_name": …, "config": {…}} as Keras serializes it.
  nlohmann::json to_json() const;

  /// Draws a float32 CPU tensor of the Keras shape `keras_shape` (kernels (k…, in, out)). Errors:
  /// ConfigError naming `who` for Orthogonal below rank 2 and Identity on another rank than 2.
  at::Tensor draw(at::IntArrayRef keras_shape, const std::string& who) const;
};

/// The Keras class names Initializer::from_json takes (sorted).
std::vector<std::string> initializer_names();

/// Keras's `compute_fans`: {fan_in, fan_out} of a weight of Keras shape `keras_shape` (see Initializer).
std::pair<int64_t, int64_t> keras_fans(at::IntArrayRef keras_shape);

/// A layer config's key for the initializer of Keras weight `weight`: "kernel_initializer", and Keras's
/// names "depthwise_initializer", "pointwise_initializer", "recurrent_initializer" for those kernels.
std::string initializer_config_key(const std::string& weight);
/// The weight a config key "<…>_initializer" names (initializer_config_key's inverse).
std::string initializer_weight(const std::string& config_key);

}  // namespace torchfit
