#pragma once
/// @file image_augmentation.h
/// What Keras 3's geometric augmentation layers (RandomRotation, RandomZoom, RandomTranslation, RandomShear)
/// share: the factor argument (a number or a pair), their fill_mode / interpolation / fill_value arguments,
/// and AffineAugmentation, their base: in train() one random transform per image resampled by
/// affine_transform (affine_transform.h), in eval() the input.
#include <string>
#include <utility>
#include <vector>

#include <torch/arg.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// A Keras factor argument: one number f or a pair [lower, upper], kept and written back in the form given
/// (as Keras's get_config writes height_factor, width_factor, x_factor, y_factor). Each layer says what the
/// number means (usually the range [−|f|, |f|]: keras_factor_range).
struct KerasFactor {
  KerasFactor() = default;
  KerasFactor(double f) : values{f} {}  // NOLINT(google-explicit-constructor): RandomRotationOptions(0.2)
  KerasFactor(double lower, double upper) : values{lower, upper} {}
  /// One number or two.
  std::vector<double> values;
  bool operator==(const KerasFactor& other) const { return values == other.values; }
};
/// A number for one value, else the list.
void to_json(nlohmann::json& j, const KerasFactor& f);
/// From a number or a list of two numbers. Errors: std::invalid_argument for anything else (the config
/// reader turns it into a ConfigError naming the layer and field).
void from_json(const nlohmann::json& j, KerasFactor& f);
/// "0.2" or "[-0.2, 0.3]", for messages.
std::string format_factor(const KerasFactor& f);

/// The range a factor draws from, as Keras's _set_factor: a number f → [−|f|, |f|], a pair → sorted.
std::pair<double, double> keras_factor_range(const KerasFactor& f);
/// Throws ConfigError "<who>: <field> must be a number or a pair of numbers in <range>, got <f>" unless f is
/// one or two numbers, each in [lo, hi] ((lo, hi] when `lo_open`).
void check_keras_factor(const KerasFactor& f, const std::string& who, const std::string& field, double lo, double hi,
                        bool lo_open = false);

/// The range of a factor checked as Keras 3's BaseImagePreprocessingLayer._set_factor with _FACTOR_BOUNDS
/// (lo, hi): a number f must lie in [lo, hi] and gives [max(−|f|, lo), |f|]; a pair [a, b] is refused only
/// when a > hi or b < lo, and gives [min, max]. Errors: ConfigError "<who>: factor must be a number in [lo, hi]
/// or a pair [lower, upper] with lower <= hi and upper >= lo, got <f>".
std::pair<double, double> keras_base_factor_range(const KerasFactor& f, const std::string& who, double lo, double hi);

/// The sampling arguments of the geometric augmentation layers, with Keras 3's names and defaults.
template <typename Derived>
struct AffineAugmentationOptions : LayerOptions<Derived> {
  /// How points outside the input are filled: "reflect" (default), "wrap", "constant", "nearest".
  TORCHFIT_ARG(Derived, std::string, fill_mode) = "reflect";
  /// "bilinear" (default) or "nearest".
  TORCHFIT_ARG(Derived, std::string, interpolation) = "bilinear";
  /// The value outside the input for fill_mode "constant". Default 0.
  TORCHFIT_ARG(Derived, double, fill_value) = 0.0;

 public:
  template <typename Args>
  void sampling_args(Args& a) {
    a("fill_mode", fill_mode());
    a("interpolation", interpolation());
    a("fill_value", fill_value());
  }
};

/// The base of the image augmentation layers: in train() augment(x), in eval() the input. Input (N, C, H, W)
/// [Keras (H, W, C)], output the same. No parameters. ONNX: none, the input passes through (inference).
/// Errors: ConfigError naming the layer for a non-image input (build).
class ImageAugmentation : public Layer {
 public:
  at::Tensor forward(const at::Tensor& x) override;
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

 protected:
  ImageAugmentation(const char* class_name, const std::string& name) : Layer(class_name, name) {}
  /// The training forward of a batch x (N, C, H, W): its random draws and their effect.
  virtual at::Tensor augment(const at::Tensor& x) = 0;
  Shape build_impl(const Shape& input_shape) override;
};

/// The base of RandomRotation, RandomZoom, RandomTranslation and RandomShear. In train(): the layer draws one
/// transform per image (random_transforms, from LibTorch's CPU generator: uniform_draws) and resamples the batch
/// with it; in eval(): the input. Input
/// (N, C, H, W) [Keras (H, W, C)], output the same. No parameters. ONNX: none, the input passes through
/// (inference). Errors: ConfigError naming the layer for an unknown fill_mode or interpolation (construction,
/// check_sampling) and a non-image input (build).
class AffineAugmentation : public ImageAugmentation {
 public:
  /// `x` (N, C, H, W) resampled through `transforms` (N, 8) with this layer's fill_mode, interpolation and
  /// fill_value — the training forward at given parameters (each layer has a function building them).
  at::Tensor transform_images(const at::Tensor& x, const at::Tensor& transforms) const;
  /// The random transforms (N, 8) of a training batch `x` (N, C, H, W), drawn as the training forward draws them
  /// (RandAugment draws its geometric operations' parameters through it).
  at::Tensor draw_transforms(const at::Tensor& x) { return random_transforms(x); }

 protected:
  AffineAugmentation(const char* class_name, const std::string& name) : ImageAugmentation(class_name, name) {}
  at::Tensor augment(const at::Tensor& x) override { return transform_images(x, random_transforms(x)); }
  /// This layer's fill_mode, interpolation and fill_value.
  virtual std::string fill_mode() const = 0;
  virtual std::string interpolation() const = 0;
  virtual double fill_value() const = 0;
  /// The random transforms (N, 8) of a training batch `x` (N, C, H, W).
  virtual at::Tensor random_transforms(const at::Tensor& x) = 0;
  /// Throws ConfigError naming the layer for an unknown fill_mode or interpolation (call from the constructor).
  void check_sampling() const;
};

/// n values uniform in [lo, hi), float32 (float64 for a float64 `like`), as Keras's random.uniform(minval,
/// maxval): drawn from LibTorch's CPU generator (at::manual_seed; the state a checkpoint saves, so a resume
/// repeats them; the same draws for a batch on CPU or CUDA), then moved to `like`'s device.
at::Tensor uniform_draws(int64_t n, double lo, double hi, const at::Tensor& like);

/// Keras 3's _set_value_range of the colour layers: `value_range` sorted. Errors: ConfigError "<who>:
/// value_range must be two numbers [low, high], got <count>".
std::pair<double, double> sorted_value_range(const std::vector<double>& value_range, const std::string& who);
/// BaseImagePreprocessingLayer._transform_value_range: x from [from.first, from.second] to [to.first, to.second],
/// (x − from_low) / (from_high − from_low) · (to_high − to_low) + to_low; x itself when the ranges are equal.
at::Tensor transform_value_range(const at::Tensor& x, std::pair<double, double> from, std::pair<double, double> to);

}  // namespace torchfit
