#pragma once
/// @file random_brightness.h
/// RandomBrightness — shifts each image's brightness at random in training, as keras.layers.RandomBrightness
/// (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomBrightness (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: a fraction of value_range's width: a number f in [−1, 1] (range [−|f|, |f|]) or a pair
///   [lower, upper] (refused when lower > 1 or upper < −1).
/// - value_range: [low, high] of the input's values (sorted, as Keras; low ≠ high); the outputs are clipped to
///   it. Default [0, 255].
struct RandomBrightnessOptions : FactorRangeOptions<RandomBrightnessOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image δ = u·(high − low), u ~ U[lower, upper), and clip(x + δ, low, high) (Keras 3's
/// RandomBrightness.get_random_transformation and transform_images). In eval(): the input. Input (N, C, H, W)
/// [Keras (H, W, C)], output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws).
/// Errors: ConfigError naming the layer for a factor out of range or a value_range that is not two finite, different
/// numbers (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_brightness.py.
class RandomBrightnessImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomBrightness);

 public:
  explicit RandomBrightnessImpl(RandomBrightnessOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n deltas δ (already times high − low), on `like`'s device.
  at::Tensor draw_deltas(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) plus each image's delta (`deltas` (N)), clipped to value_range.
  at::Tensor adjust(const at::Tensor& x, const at::Tensor& deltas) const;
  RandomBrightnessOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return adjust(x, draw_deltas(x.size(0), x)); }

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomBrightness);

}  // namespace torchfit
