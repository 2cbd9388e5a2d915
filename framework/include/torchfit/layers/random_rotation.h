#pragma once
/// @file random_rotation.h
/// RandomRotation — rotates images by a random angle in training, as keras.layers.RandomRotation (Keras 3).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomRotation (Keras 3's arguments and defaults). Required: factor.
struct RandomRotationOptions : AffineAugmentationOptions<RandomRotationOptions> {
  RandomRotationOptions(KerasFactor factor) : factor_(std::move(factor)) {}  // NOLINT: RandomRotationOptions(0.2)
  /// For the registry only (layer_args.h): leaves factor unset, to be read from a config.
  explicit RandomRotationOptions(FromConfig) {}
  /// Fraction of a full turn: a number f (angles in [−|f|·360°, |f|·360°], |f| ≤ 1) or a pair [lower, upper]
  /// (sorted; refused only when lower > 1 or upper < −1, as Keras). Positive angles turn counter-clockwise.
  TORCH_ARG(KerasFactor, factor);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("factor", factor());
    sampling_args(a);
  }
};

/// In train(): each image rotated about its centre by its own angle θ ~ U[lower·360°, upper·360°), as Keras 3's
/// RandomRotation.get_random_transformation and _compute_affine_matrix (centre ((W − 1)/2, (H − 1)/2), the
/// output pixel sampling the input at a0 = cos θ, a1 = −sin θ, b0 = sin θ, b1 = cos θ about it), resampled
/// with fill_mode (default reflect), interpolation (default bilinear) and fill_value by affine_transform.
/// In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the same. Keras's `seed` is not read
/// (LibTorch's CPU generator, uniform_draws). Errors: ConfigError naming the layer for a factor out of range,
/// an unknown fill_mode or interpolation (construction) or a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_rotation.py.
class RandomRotationImpl : public AffineAugmentation {
  TORCHFIT_LAYER_CLASS(RandomRotation);

 public:
  explicit RandomRotationImpl(RandomRotationOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n angles in degrees, uniform in [lower·360, upper·360), on `like`'s device.
  at::Tensor draw_angles(int64_t n, const at::Tensor& like) const;
  /// The transforms (N, 8) of rotations by `angles` (N, degrees) of height × width images.
  static at::Tensor rotation_transforms(const at::Tensor& angles, int64_t height, int64_t width);
  RandomRotationOptions options;

 protected:
  std::string fill_mode() const override { return options.fill_mode(); }
  std::string interpolation() const override { return options.interpolation(); }
  double fill_value() const override { return options.fill_value(); }
  at::Tensor random_transforms(const at::Tensor& x) override;

 private:
  std::pair<double, double> range_;  // of the factor, as fractions of a turn
};
TORCH_MODULE(RandomRotation);

}  // namespace torchfit
