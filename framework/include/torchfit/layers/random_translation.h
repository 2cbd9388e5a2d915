#pragma once
/// @file random_translation.h
/// RandomTranslation — shifts images at random in training, as keras.layers.RandomTranslation (Keras 3).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomTranslation (Keras 3's arguments and defaults). Required: height_factor, width_factor.
struct RandomTranslationOptions : AffineAugmentationOptions<RandomTranslationOptions> {
  RandomTranslationOptions(KerasFactor height_factor, KerasFactor width_factor)
      : height_factor_(std::move(height_factor)), width_factor_(std::move(width_factor)) {}
  /// For the registry only (layer_args.h): leaves both factors unset, to be read from a config.
  explicit RandomTranslationOptions(FromConfig) {}
  /// Vertical shift as a fraction of the height: a number f (range [−|f|, |f|]) or a pair [lower, upper], each
  /// in [−1, 1]. Positive values move the content down.
  TORCH_ARG(KerasFactor, height_factor);
  /// Horizontal shift as a fraction of the width, likewise. Positive values move the content right.
  TORCH_ARG(KerasFactor, width_factor);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("height_factor", height_factor());
    a.required("width_factor", width_factor());
    sampling_args(a);
  }
};

/// In train(): each image shifted by its own dy = fy·H and dx = fx·W pixels, fy ~ U[lower, upper) of
/// height_factor, then fx of width_factor (Keras's order), as Keras 3's RandomTranslation: the output pixel
/// (x, y) samples the input at (x − dx, y − dy) (_get_translation_matrix), resampled with fill_mode (default
/// reflect), interpolation (default bilinear) and fill_value by affine_transform. In eval(): the input. Input
/// (N, C, H, W) [Keras (H, W, C)], output the same. Keras's `seed` is not read (LibTorch's CPU generator,
/// uniform_draws). Errors: ConfigError naming the layer for a factor outside [−1, 1], an unknown fill_mode or
/// interpolation (construction) or a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_translation.py.
class RandomTranslationImpl : public AffineAugmentation {
  TORCHFIT_LAYER_CLASS(RandomTranslation);

 public:
  explicit RandomTranslationImpl(RandomTranslationOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n shifts (n, 2) as fractions of the size: column 0 the vertical fy, column 1 the horizontal fx.
  at::Tensor draw_translations(int64_t n, const at::Tensor& like) const;
  /// The transforms (N, 8) of shifts by fractions `height_translate` and `width_translate` (each (N)) of
  /// height × width images.
  static at::Tensor translation_transforms(const at::Tensor& height_translate, const at::Tensor& width_translate,
                                           int64_t height, int64_t width);
  RandomTranslationOptions options;

 protected:
  std::string fill_mode() const override { return options.fill_mode(); }
  std::string interpolation() const override { return options.interpolation(); }
  double fill_value() const override { return options.fill_value(); }
  at::Tensor random_transforms(const at::Tensor& x) override;

 private:
  std::pair<double, double> height_range_, width_range_;
};
TORCH_MODULE(RandomTranslation);

}  // namespace torchfit
