#pragma once
/// @file rand_augment.h
/// RandAugment — num_ops operations drawn from eleven per batch, applied in training, as keras.layers.RandAugment
/// (Keras 3).
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/auto_contrast.h>
#include <torchfit/layers/equalization.h>
#include <torchfit/layers/image_augmentation.h>
#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_color_degeneration.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_posterization.h>
#include <torchfit/layers/random_rotation.h>
#include <torchfit/layers/random_sharpness.h>
#include <torchfit/layers/random_shear.h>
#include <torchfit/layers/random_translation.h>
#include <torchfit/layers/solarization.h>

namespace torchfit {

/// Options of RandAugment (Keras 3's arguments and defaults; every argument optional).
struct RandAugmentOptions : LayerOptions<RandAugmentOptions> {
  /// [low, high] of the input's values, low < high, passed to the colour operations (Keras takes it as given;
  /// its RandomContrast then clips with it as given). Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};
  /// Operations applied one after another to the batch, in [0, RandAugmentImpl::max_num_ops] = [0, 100]
  /// (Keras: any; torchfit bounds it, docs/data_pipeline.md: each one is a pass over the batch, and beyond a few
  /// the images are destroyed). Default 2.
  TORCH_ARG(int64_t, num_ops) = 2;
  /// Strength: a number f in [0, 1] gives [0, f], a pair [lower, upper] of numbers in [0, 1] is sorted (Keras's
  /// _set_factor with _FACTOR_BOUNDS (0, 1), then its RandomShear and Solarization check both ends); the range is
  /// every operation's factor. Default 0.5.
  TORCH_ARG(KerasFactor, factor) = KerasFactor(0.5);
  /// The geometric operations' interpolation: "bilinear" (default) or "nearest".
  TORCH_ARG(std::string, interpolation) = "bilinear";

 public:
  template <typename Args>
  void args(Args& a) {
    a("value_range", value_range());
    a("num_ops", num_ops());
    a("factor", factor());
    a("interpolation", interpolation());
  }
};

/// In train(), as Keras 3's RandAugment.get_random_transformation and transform_images: num_ops operation
/// indices drawn once per BATCH (randint(0, 11), with repeats), then every operation's own per-image draws in
/// the order of the list below (all eleven, whether picked or not), then the picked operations applied in turn
/// to the whole batch (an operation picked twice applies its one draw twice). The operations, with [lower,
/// upper] the factor's range: RandomShear(x_factor = y_factor = [lower, upper]), RandomTranslation(both factors
/// [lower, upper]), RandomRotation([lower, upper]) — these three with `interpolation` and their default
/// fill_mode "reflect" —, RandomBrightness, RandomColorDegeneration, RandomContrast, RandomSharpness (each
/// factor [lower, upper], value_range), RandomPosterization(factor max(1, int(8·upper)), value_range),
/// Solarization(addition_factor = threshold_factor = [lower, upper], value_range), AutoContrast(value_range),
/// Equalization(value_range). In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], C = 1 or 3, output
/// the same. Keras's `seed` is not read (LibTorch's CPU generator). ONNX: none, the input passes through
/// (inference). Errors: ConfigError naming the layer, the argument and the value for a factor out of range,
/// num_ops outside [0, 100], an unknown interpolation, a value_range that is not [low, high] of finite numbers
/// with low < high (construction); a non-image input or another channel count (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/rand_augment.py.
class RandAugmentImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandAugment);

 public:
  /// The operations' names, in Keras's _AUGMENT_LAYERS order (index i = operation i).
  static const std::vector<std::string>& operation_names();
  /// The largest num_ops torchfit takes (Keras has no bound; a typo such as 1e9 would stall training).
  static constexpr int64_t max_num_ops = 100;
  explicit RandAugmentImpl(RandAugmentOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// The num_ops operation indices of a batch (int64, in [0, 11)), on the CPU.
  at::Tensor draw_operations() const;
  /// Operation `index`'s per-image draws for the batch `x` (undefined for AutoContrast and Equalization).
  at::Tensor draw_operation(int64_t index, const at::Tensor& x);
  /// Operation `index` applied to x at its draws `drawn` (from draw_operation).
  at::Tensor apply_operation(int64_t index, const at::Tensor& x, const at::Tensor& drawn) const;
  RandAugmentOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  RandomShear shear_{nullptr};
  RandomTranslation translation_{nullptr};
  RandomRotation rotation_{nullptr};
  RandomBrightness brightness_{nullptr};
  RandomColorDegeneration color_degeneration_{nullptr};
  RandomContrast contrast_{nullptr};
  RandomSharpness sharpness_{nullptr};
  RandomPosterization posterization_{nullptr};
  Solarization solarization_{nullptr};
  AutoContrast auto_contrast_{nullptr};
  Equalization equalization_{nullptr};
};
TORCH_MODULE(RandAugment);

}  // namespace torchfit
