#pragma once
/// @file random_zoom.h
/// RandomZoom — zooms images in or out at random in training, as keras.layers.RandomZoom (Keras 3).
#include <optional>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of RandomZoom (Keras 3's arguments and defaults). Required: height_factor.
struct RandomZoomOptions : AffineAugmentationOptions<RandomZoomOptions> {
  RandomZoomOptions(KerasFactor height_factor) : height_factor_(std::move(height_factor)) {}  // NOLINT
  /// For the registry only (layer_args.h): leaves height_factor unset, to be read from a config.
  explicit RandomZoomOptions(FromConfig) {}
  /// A number f (zoom range [−|f|, |f|]) or a pair [lower, upper], each in (−1, 1]: the vertical zoom is
  /// drawn from [1 + lower, 1 + upper). Positive values zoom out (the content gets smaller), negative in.
  TORCH_ARG(KerasFactor, height_factor);
  /// The same for the horizontal zoom; none (default) ⇒ each image's horizontal zoom is its vertical one
  /// (aspect ratio kept).
  TORCH_ARG(std::optional<KerasFactor>, width_factor) = std::nullopt;

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("height_factor", height_factor());
    a("width_factor", width_factor());
    sampling_args(a);
  }
};

/// In train(): each image zoomed about its centre by its own factors zy ~ U[1 + lower, 1 + upper) (height) and
/// zx (width, from width_factor, else zx = zy), as Keras 3's RandomZoom.get_random_transformation and
/// _get_zoom_matrix: the output pixel (x, y) samples the input at (zx·x + (W − 1)/2·(1 − zx),
/// zy·y + (H − 1)/2·(1 − zy)); resampled with fill_mode (default reflect), interpolation (default bilinear)
/// and fill_value by affine_transform. In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the
/// same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws). Errors: ConfigError naming the layer
/// for a factor outside (−1, 1], an unknown fill_mode or interpolation (construction) or a non-image input
/// (build). Source: keras/src/layers/preprocessing/image_preprocessing/random_zoom.py.
class RandomZoomImpl : public AffineAugmentation {
  TORCHFIT_LAYER_CLASS(RandomZoom);

 public:
  explicit RandomZoomImpl(RandomZoomOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// n zooms (n, 2): column 0 the vertical zy, column 1 the horizontal zx (drawn in that order, as Keras).
  at::Tensor draw_zooms(int64_t n, const at::Tensor& like) const;
  /// The transforms (N, 8) of zooms by `height_zoom` and `width_zoom` (each (N)) of height × width images.
  static at::Tensor zoom_transforms(const at::Tensor& height_zoom, const at::Tensor& width_zoom, int64_t height,
                                    int64_t width);
  RandomZoomOptions options;

 protected:
  std::string fill_mode() const override { return options.fill_mode(); }
  std::string interpolation() const override { return options.interpolation(); }
  double fill_value() const override { return options.fill_value(); }
  at::Tensor random_transforms(const at::Tensor& x) override;

 private:
  std::pair<double, double> height_range_, width_range_;
};
TORCH_MODULE(RandomZoom);

}  // namespace torchfit
