#pragma once
/// @file random_color_degeneration.h
/// RandomColorDegeneration — blends each image towards its grayscale at random in training, as
/// keras.layers.RandomColorDegeneration (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomColorDegeneration (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: the blend weight's range: a number f in [−1, 1] gives [−|f|, |f|], a pair [lower, upper] is sorted
///   (refused when lower > 1 or upper < −1). Keras 3's code: the layer keeps the base's _FACTOR_BOUNDS (−1, 1),
///   so a number f draws from [−f, f) — its docstring says [0, f]; a pair [0, f] gives that.
/// - value_range: [low, high] the outputs are clipped to (sorted, as Keras; low ≠ high). Default [0, 255].
struct RandomColorDegenerationOptions : FactorRangeOptions<RandomColorDegenerationOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image a weight w ~ U[lower, upper) and clip(x + w·(gray − x), low, high), gray =
/// 0.2989·R + 0.5870·G + 0.1140·B (ops.image.rgb_to_grayscale; a 1-channel image is its own gray, so it stays),
/// as Keras 3's RandomColorDegeneration.transform_images. In eval(): the input. Input (N, C, H, W) [Keras
/// (H, W, C)], C = 1 or 3, output the same. Keras's `seed` is not read (LibTorch's CPU generator,
/// uniform_draws). Errors: ConfigError naming the layer for a factor out of range or a value_range that is not
/// two finite, different numbers (construction), a non-image input or another channel count (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_color_degeneration.py.
class RandomColorDegenerationImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomColorDegeneration);

 public:
  explicit RandomColorDegenerationImpl(RandomColorDegenerationOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n blend weights, uniform in [lower, upper), on `like`'s device.
  at::Tensor draw_factors(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) blended towards its gray by each image's weight (`factors` (N)), clipped to value_range.
  at::Tensor degenerate(const at::Tensor& x, const at::Tensor& factors) const;
  RandomColorDegenerationOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return degenerate(x, draw_factors(x.size(0), x)); }
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomColorDegeneration);

}  // namespace torchfit
