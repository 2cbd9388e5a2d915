#pragma once
/// @file random_saturation.h
/// RandomSaturation — scales each image's saturation at random in training, as keras.layers.RandomSaturation
/// (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomSaturation (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: a number f in [−1, 1] (the range [−|f|, |f|]) or a pair [lower, upper] (refused when lower > 1 or
///   upper < −1): Keras 3's code checks it with the base _FACTOR_BOUNDS (−1, 1), so a number draws from
///   [−|f|, |f|] — its docstring says [0, f]; a pair [0, f] gives that. 0.5 leaves the image as it is.
/// - value_range: [low, high] (sorted, as Keras's _set_value_range; low ≠ high) the scaled saturation is clipped
///   to. Default [0, 255].
struct RandomSaturationOptions : FactorRangeOptions<RandomSaturationOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image u ~ U[lower, upper) and the multiplier m = u/(1 − u + 1e-7) (Keras's epsilon()); the
/// image (of any scale: not rescaled) turned to HSV (rgb_to_hsv), S·m clipped to value_range, back to RGB
/// (hsv_to_rgb) — no other clipping (Keras 3's RandomSaturation.get_random_transformation and
/// transform_images). With value_range [0, 255] S may exceed 1 (u > 0.5) and the RGB values then leave the
/// input's range, as in Keras; u < 0 gives m < 0, clipped to S = 0 (grey). In eval(): the input. Input
/// (N, 3, H, W) [Keras (H, W, 3)], output the same. Keras's `seed` is not read (LibTorch's CPU generator,
/// uniform_draws). Errors: ConfigError naming the layer for a factor out of range or a value_range that is not
/// two finite, different numbers (construction), a non-image input or C ≠ 3 (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_saturation.py.
class RandomSaturationImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomSaturation);

 public:
  explicit RandomSaturationImpl(RandomSaturationOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n multipliers m = u/(1 − u + 1e-7), u ~ U[lower, upper), on `like`'s device.
  at::Tensor draw_factors(int64_t n, const at::Tensor& like) const;
  /// x (N, 3, H, W) with each image's saturation times its multiplier (`factors` (N)), as transform_images.
  at::Tensor adjust(const at::Tensor& x, const at::Tensor& factors) const;
  RandomSaturationOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return adjust(x, draw_factors(x.size(0), x)); }
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomSaturation);

}  // namespace torchfit
