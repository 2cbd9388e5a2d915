#pragma once
/// @file random_hue.h
/// RandomHue — rotates each image's hue at random in training, as keras.layers.RandomHue (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomHue (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: a number f in [0, 1] (the range [0, f]) or a pair [lower, upper] (refused when lower > 1 or
///   upper < 0), Keras's _set_factor with _FACTOR_BOUNDS (0, 1). The hue turns by ±u/2 of a full turn, u from
///   the range.
/// - value_range: [low, high] of the input's values, low < high (Keras takes it as given). Default [0, 255].
struct RandomHueOptions : FactorRangeOptions<RandomHueOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image a sign (−1 when a uniform draw is > 0.5, else +1) and u ~ U[lower, upper), δ =
/// sign·u·0.5; the image scaled from value_range to [0, 1], turned to HSV (rgb_to_hsv), H + δ wrapped once
/// into [0, 1] (H − 1 where > 1, H + 1 where < 0), back to RGB, clipped to [0, 1] and scaled back to value_range
/// (Keras 3's RandomHue.get_random_transformation and transform_images). In eval(): the input. Input (N, 3, H, W)
/// [Keras (H, W, 3)], output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws).
/// Errors: ConfigError naming the layer for a factor out of range or a value_range that is not [low, high] of finite
/// numbers with low < high (construction), a non-image input or C ≠ 3 (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_hue.py.
class RandomHueImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomHue);

 public:
  explicit RandomHueImpl(RandomHueOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n hue shifts δ = ±u/2 (fractions of a turn), on `like`'s device.
  at::Tensor draw_deltas(int64_t n, const at::Tensor& like) const;
  /// x (N, 3, H, W) with each image's hue turned by its δ (`deltas` (N)), as transform_images.
  at::Tensor adjust(const at::Tensor& x, const at::Tensor& deltas) const;
  RandomHueOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return adjust(x, draw_deltas(x.size(0), x)); }
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomHue);

}  // namespace torchfit
