#pragma once
/// @file random_contrast.h
/// RandomContrast — scales each image's contrast at random in training, as keras.layers.RandomContrast (Keras 3).
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomContrast (Keras 3's arguments and defaults; FactorRangeOptions). Required: factor.
/// - factor: a number f in [0, 1] or a pair [lower, upper] (refused when lower > 1 or upper < 0): the contrast
///   factor is drawn from [1 − lower, 1 + upper). As Keras 3's code (_set_factor with _FACTOR_BOUNDS (0, 1)), a
///   number gives lower = max(−f, 0) = 0, so [1, 1 + f) — its docstring says [1 − f, 1 + f]; a pair [f, f]
///   gives that.
/// - value_range: [low, high] the outputs are clipped to, low < high (Keras takes it as given: reversed, its
///   np.clip gives value_range[1] everywhere). Default [0, 255].
struct RandomContrastOptions : FactorRangeOptions<RandomContrastOptions> {
  using FactorRangeOptions::FactorRangeOptions;
};

/// In train(): per image a factor c ~ U[1 − lower, 1 + upper) and clip((x − m)·c + m, low, high), m the mean
/// over the rows and columns of each channel of the image (Keras 3's RandomContrast._adjust_contrast, then
/// np.clip with value_range). In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the same.
/// Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws). Errors: ConfigError naming the layer for a
/// factor out of range or a value_range that is not [low, high] of finite numbers with low < high (construction), a
/// non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_contrast.py.
class RandomContrastImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomContrast);

 public:
  explicit RandomContrastImpl(RandomContrastOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n contrast factors, uniform in [1 − lower, 1 + upper), on `like`'s device.
  at::Tensor draw_factors(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) with each image's contrast scaled by its factor (`factors` (N)), clipped to value_range.
  at::Tensor adjust(const at::Tensor& x, const at::Tensor& factors) const;
  RandomContrastOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return adjust(x, draw_factors(x.size(0), x)); }

 private:
  std::pair<double, double> range_, value_range_;
};
TORCH_MODULE(RandomContrast);

}  // namespace torchfit
