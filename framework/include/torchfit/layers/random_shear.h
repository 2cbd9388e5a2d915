#pragma once
/// @file random_shear.h
/// RandomShear — shears images at random in training, as keras.layers.RandomShear (Keras 3).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomShear (Keras 3's arguments and defaults; every argument optional).
struct RandomShearOptions : AffineAugmentationOptions<RandomShearOptions> {
  /// Horizontal shear: a number f (range [−f, f]) or a pair [lower, upper], each in [0, 1]. Default 0.
  TORCH_ARG(KerasFactor, x_factor) = KerasFactor(0.0);
  /// Vertical shear, likewise. Default 0.
  TORCH_ARG(KerasFactor, y_factor) = KerasFactor(0.0);

 public:
  template <typename Args>
  void args(Args& a) {
    a("x_factor", x_factor());
    a("y_factor", y_factor());
    sampling_args(a);
  }
};

/// In train(): per image a sign s (−1 when a uniform draw > 0.5, else +1), then sy ~ U[lower, upper) of
/// y_factor and sx of x_factor (Keras's order), both times s, as Keras 3's RandomShear.get_random_transformation;
/// the output pixel (x, y) samples the input at (x + sx·y, sy·x + y) (_get_shear_matrix, about the top-left
/// pixel, not the centre), resampled with fill_mode (default reflect), interpolation (default bilinear) and
/// fill_value by affine_transform. In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the same.
/// Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws). Errors: ConfigError naming the layer for a
/// factor outside [0, 1], an unknown fill_mode or interpolation (construction) or a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_shear.py.
class RandomShearImpl : public AffineAugmentation {
  TORCHFIT_LAYER_CLASS(RandomShear);

 public:
  explicit RandomShearImpl(RandomShearOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// n shears (n, 2), the sign applied: column 0 sx, column 1 sy.
  at::Tensor draw_shears(int64_t n, const at::Tensor& like) const;
  /// The transforms (N, 8) of shears `shear_x` and `shear_y` (each (N)).
  static at::Tensor shear_transforms(const at::Tensor& shear_x, const at::Tensor& shear_y);
  RandomShearOptions options;

 protected:
  std::string fill_mode() const override { return options.fill_mode(); }
  std::string interpolation() const override { return options.interpolation(); }
  double fill_value() const override { return options.fill_value(); }
  at::Tensor random_transforms(const at::Tensor& x) override;

 private:
  std::pair<double, double> x_range_, y_range_;
};
TORCH_MODULE(RandomShear);

}  // namespace torchfit
