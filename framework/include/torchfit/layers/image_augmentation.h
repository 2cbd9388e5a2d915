#pragma once
/// @file image_augmentation.h
/// What Keras 3's augmentation layers share: the factor argument (a number or a pair) and its checks, the
/// value_range argument (keras_value_range), the options of the colour layers with a factor and a value_range
/// (FactorRangeOptions), the geometric layers' (RandomRotation, RandomZoom, RandomTranslation, RandomShear)
/// fill_mode / interpolation / fill_value arguments and AffineAugmentation, their base: in train() one random
/// transform per image resampled by affine_transform (affine_transform.h), in eval() the input.
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
/// when a > hi or b < lo, and gives [min, max]. Errors: ConfigError "<who>: <field> must be a number in [lo, hi]
/// or a pair [lower, upper] with lower <= hi and upper >= lo, got <f>" (`field` "factor" unless given, as
/// RandomErasing's `scale`, which Keras checks the same way).
std::pair<double, double> keras_base_factor_range(const KerasFactor& f, const std::string& who, double lo, double hi,
                                                  const std::string& field = "factor");

/// How a layer reads its value_range argument: `sorted`, as Keras 3's _set_value_range (AutoContrast,
/// Equalization, Solarization, RandomPosterization, RandomSaturation, RandomColorDegeneration, RandomSharpness,
/// RandomBrightness); `as_given`, where Keras takes it unchecked (RandomHue, RandomContrast, RandomErasing,
/// RandomColorJitter, RandAugment: reversed, it inverts their scaling or empties their clip), so low < high.
enum class ValueRangeOrder { sorted, as_given };

/// A value_range argument [low, high] read as `order` says, Keras's one check (two numbers) and torchfit's
/// (docs/data_pipeline.md, "Arguments refused where Keras 3 accepts them"): two finite numbers that differ —
/// an empty range such as [5, 5] maps every value to one point (or divides by zero). Errors: ConfigError "<who>:
/// value_range must be two numbers [low, high], got [a]", "… must be two finite numbers [low, high], got
/// [a, inf]", "… must be two different numbers [low, high] (an empty range maps every value to one point),
/// got [5, 5]", and for `as_given` "… must be [low, high] with low < high, got [255, 0]".
std::pair<double, double> keras_value_range(const std::vector<double>& v, const std::string& who,
                                            ValueRangeOrder order);

/// The arguments of the colour layers with a required factor and a value_range (Keras 3's RandomBrightness,
/// RandomContrast, RandomHue, RandomSaturation, RandomColorDegeneration, RandomSharpness, RandomPosterization),
/// once: `struct RandomHueOptions : FactorRangeOptions<RandomHueOptions> { using FactorRangeOptions::
/// FactorRangeOptions; };`. The setters return `Derived&`, so chains keep the layer's own options
/// (`RandomHueOptions(0.2).value_range({0, 1}).name("hue")`). Each layer's docstring says what its factor means
/// and how it checks both (the JSON keys are Keras's: "factor", "value_range").
template <typename Derived>
struct FactorRangeOptions : LayerOptions<Derived> {
  FactorRangeOptions(KerasFactor factor) : factor_(std::move(factor)) {}  // NOLINT: RandomHueOptions(0.2)
  /// For the registry only (layer_args.h): leaves factor unset, to be read from a config.
  explicit FactorRangeOptions(FromConfig) {}
  /// A number or a pair [lower, upper] (required); its bounds and meaning are the layer's.
  TORCHFIT_ARG(Derived, KerasFactor, factor);
  /// [low, high] of the input's values (keras_value_range). Default [0, 255].
  TORCHFIT_ARG(Derived, std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("factor", factor());
    a("value_range", value_range());
  }
};

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
/// n values of Beta(a, b) (a, b > 0), as Keras's random.beta: X/(X + Y) of X ~ Gamma(a), Y ~ Gamma(b), each
/// drawn as Gamma(a + 1)·U^(1/a) in logarithms (so that a small a does not underflow both to 0, as JAX's and
/// NumPy's beta avoid it), float64 from LibTorch's CPU generator, then float32 (float64 for a float64
/// `like`) on `like`'s device.
at::Tensor beta_draws(int64_t n, double a, double b, const at::Tensor& like);
/// A random permutation of 0 … n − 1 (int64), as Keras's random.shuffle of arange(n): LibTorch's CPU generator
/// (randperm), then `like`'s device.
at::Tensor permutation_draws(int64_t n, const at::Tensor& like);

/// (N, 1, H, W) bool: the pixels of each image's box [x0, x1) × [y0, y1) (each (N), real-valued), pixel
/// (row, column) inside when x0 ≤ column < x1 and y0 ≤ row < y1 (Keras's _generate_batch_mask).
at::Tensor box_masks(const at::Tensor& x0, const at::Tensor& x1, const at::Tensor& y0, const at::Tensor& y1,
                     int64_t height, int64_t width);

/// ConfigError "<who>: labels must be (N, K) floating point (one-hot or soft labels) for the N = <n> images,
/// got <dtype> <shape>" unless `labels` is so (MixUp's and CutMix's mix()).
void check_mix_labels(const at::Tensor& labels, int64_t n, const std::string& who);
/// ConfigError "<who> expects 3 channels (RGB), got <shape>" unless the image (H, W, C) has C = 3 (the build
/// check of the layers that go through HSV).
void check_rgb_input(const Shape& input_shape, const std::string& who);
/// Keras 3's ops.image.rgb_to_hsv on images (N, 3, H, W) [Keras (H, W, 3)] (keras/src/backend/numpy/image.py,
/// after dm_pix): values below the dtype's epsilon in magnitude set to 0, then hue in [0, 1) (0 for a grey
/// pixel), saturation (max − min)/max (0 where max ≤ 0), value max; channels (H, S, V). No clipping: any
/// scale of input (a saturation and hue of [0, 255] images are those of [0, 1] ones, the value is 255 times).
at::Tensor rgb_to_hsv(const at::Tensor& images);
/// Keras 3's ops.image.hsv_to_rgb on (N, 3, H, W) (H, S, V): dh = (h mod 1)·6, R = V·(1 − S + S·clip(|dh − 3|
/// − 1, 0, 1)), G = V·(1 − S + S·clip(2 − |dh − 2|, 0, 1)), B = V·(1 − S + S·clip(2 − |dh − 4|, 0, 1)).
/// No clipping (S > 1 gives values below 0, as Keras).
at::Tensor hsv_to_rgb(const at::Tensor& images);

/// BaseImagePreprocessingLayer._transform_value_range: x from [from.first, from.second] to [to.first, to.second],
/// (x − from_low) / (from_high − from_low) · (to_high − to_low) + to_low; x itself when the ranges are equal.
at::Tensor transform_value_range(const at::Tensor& x, std::pair<double, double> from, std::pair<double, double> to);

}  // namespace torchfit
