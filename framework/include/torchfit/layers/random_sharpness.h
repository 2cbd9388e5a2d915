#pragma once
/// @file random_sharpness.h
/// RandomSharpness — blurs or sharpens each image at random in training, as keras.layers.RandomSharpness
/// (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomSharpness (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: a number f in [0, 1] (range [0, f]) or a pair [lower, upper] (sorted; refused when lower > 1 or
///   upper < 0): 0 blurs fully, 0.5 leaves the image, 1 sharpens (_FACTOR_BOUNDS (0, 1)).
/// - value_range: [low, high] the outputs are clipped to (sorted, as Keras; low ≠ high). Default [0, 255].
struct RandomSharpnessOptions : FactorRangeOptions<RandomSharpnessOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image u ~ U[lower, upper), s = 2u, and clip(x + (1 − s)·(blur − x), low, high), blur the
/// depthwise 3×3 convolution with [[1, 1, 1], [1, 5, 1], [1, 1, 1]] / 13 and "same" zero padding (the border
/// pixels are blurred with zeros outside, as Keras's depthwise_conv — not left as they are, as PIL does), per
/// Keras 3's RandomSharpness.transform_images. In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)],
/// output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws). Errors:
/// ConfigError naming the layer for a factor out of range or a value_range that is not two finite, different numbers
/// (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_sharpness.py.
class RandomSharpnessImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomSharpness);

 public:
  explicit RandomSharpnessImpl(RandomSharpnessOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n factors u (before Keras's doubling), uniform in [lower, upper), on `like`'s device.
  at::Tensor draw_factors(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) blended with its 3×3 blur by each image's factor u (`factors` (N)), clipped to value_range.
  at::Tensor sharpen(const at::Tensor& x, const at::Tensor& factors) const;
  RandomSharpnessOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return sharpen(x, draw_factors(x.size(0), x)); }

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomSharpness);

}  // namespace torchfit
