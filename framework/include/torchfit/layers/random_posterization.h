#pragma once
/// @file random_posterization.h
/// RandomPosterization — keeps a random number of each channel value's high bits in training, as
/// keras.layers.RandomPosterization (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomPosterization (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: the bits kept, integers: a number f in [1, 8] gives [1, f], a pair is sorted (refused when
///   lower > 8 or upper < 1, Keras's _FACTOR_BOUNDS (1, 8)). Keras 3 draws the bits with randint(lower, upper),
///   upper excluded: factor 8 keeps 1 to 7 bits, never 8; a pair [b, b] keeps b. torchfit also refuses values
///   that are not integers and pairs whose draws would leave [0, 8] bits (lower < 0, or upper > 9 for
///   lower ≠ upper).
/// - value_range: [low, high] of the input's values (sorted, as Keras; low ≠ high), mapped to [0, 255] around
///   the bit operation. Default [0, 255].
struct RandomPosterizationOptions : FactorRangeOptions<RandomPosterizationOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image b bits (b ~ randint[lower, upper), or lower when lower = upper), shift = 8 − b, and
/// v = (uint8(x mapped from value_range to [0, 255]) >> shift) << shift mapped back (Keras 3's
/// RandomPosterization.transform_images: the uint8 cast truncates; keep inputs inside value_range, outside it
/// the cast is undefined). In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the same.
/// Keras's `seed` is not read (LibTorch's CPU generator: at::randint, moved to the batch's device). Errors:
/// ConfigError naming the layer for a factor out of range or not integral, or a value_range that is not two
/// numbers (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_posterization.py.
class RandomPosterizationImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomPosterization);

 public:
  explicit RandomPosterizationImpl(RandomPosterizationOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n bit counts (int64), on `like`'s device.
  at::Tensor draw_bits(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) keeping each image's `bits` (N) high bits of every value.
  at::Tensor posterize(const at::Tensor& x, const at::Tensor& bits) const;
  RandomPosterizationOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return posterize(x, draw_bits(x.size(0), x)); }

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomPosterization);

}  // namespace torchfit
