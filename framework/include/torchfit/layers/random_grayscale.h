#pragma once
/// @file random_grayscale.h
/// RandomGrayscale — turns images gray at random in training, as keras.layers.RandomGrayscale (Keras 3).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomGrayscale (Keras 3's arguments and defaults).
struct RandomGrayscaleOptions : LayerOptions<RandomGrayscaleOptions> {
  /// Probability that an image turns gray, in [0, 1]. Default 0.5.
  TORCH_ARG(double, factor) = 0.5;

 public:
  template <typename Args>
  void args(Args& a) {
    a("factor", factor());
  }
};

/// In train(): per image a uniform draw u; when u < factor the image becomes its luma 0.2989·R + 0.5870·G +
/// 0.1140·B in every channel (Keras 3's RandomGrayscale with ops.image.rgb_to_grayscale, broadcast back to 3
/// channels; a 1-channel image stays as it is). In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)],
/// C = 1 or 3, output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws).
/// Errors: ConfigError naming the layer for a factor outside [0, 1] (construction), a non-image input or
/// another channel count (build). Source: keras/src/layers/preprocessing/image_preprocessing/random_grayscale.py.
class RandomGrayscaleImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomGrayscale);

 public:
  explicit RandomGrayscaleImpl(RandomGrayscaleOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// n booleans: whether each image turns gray (u < factor), on `like`'s device.
  at::Tensor draw_applies(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) with the images where `applies` (N, bool) is true in grayscale.
  at::Tensor apply(const at::Tensor& x, const at::Tensor& applies) const;
  RandomGrayscaleOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return apply(x, draw_applies(x.size(0), x)); }
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(RandomGrayscale);

}  // namespace torchfit
