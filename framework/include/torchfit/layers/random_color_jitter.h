#pragma once
/// @file random_color_jitter.h
/// RandomColorJitter — RandomBrightness, RandomContrast, RandomSaturation and RandomHue in one layer, as
/// keras.layers.RandomColorJitter (Keras 3).
#include <memory>
#include <optional>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>
#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_hue.h>
#include <torchfit/layers/random_saturation.h>

namespace torchfit {

/// Options of RandomColorJitter (Keras 3's arguments and defaults): each factor is that layer's `factor`
/// (none, the default: that step is left out).
struct RandomColorJitterOptions : LayerOptions<RandomColorJitterOptions> {
  /// [low, high] of the input's values, low < high, passed to every step. Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};
  /// RandomBrightness's factor (a number in [−1, 1] or a pair). Default none.
  TORCH_ARG(std::optional<KerasFactor>, brightness_factor) = std::nullopt;
  /// RandomContrast's factor (a number in [0, 1] or a pair). Default none.
  TORCH_ARG(std::optional<KerasFactor>, contrast_factor) = std::nullopt;
  /// RandomSaturation's factor (a number in [−1, 1] or a pair). Default none.
  TORCH_ARG(std::optional<KerasFactor>, saturation_factor) = std::nullopt;
  /// RandomHue's factor (a number in [0, 1] or a pair). Default none.
  TORCH_ARG(std::optional<KerasFactor>, hue_factor) = std::nullopt;

 public:
  template <typename Args>
  void args(Args& a) {
    a("value_range", value_range());
    a("brightness_factor", brightness_factor());
    a("contrast_factor", contrast_factor());
    a("saturation_factor", saturation_factor());
    a("hue_factor", hue_factor());
  }
};

/// In train(), in Keras's order, each step given a factor: RandomBrightness, RandomContrast, RandomSaturation,
/// RandomHue, each with this value_range, each drawing its own per-image parameters after the step before
/// has transformed the batch (Keras 3's RandomColorJitter.transform_images; torchfit's layers of those
/// names do each step). In eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], C = 3 with a saturation
/// or hue factor, output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws).
/// Errors: ConfigError naming this layer, then the step's layer and its message, for a factor a step refuses; naming
/// this layer for a value_range that is not [low, high] of finite numbers with low < high (construction); a non-image
/// input, or C ≠ 3 with a saturation or hue factor (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_color_jitter.py.
class RandomColorJitterImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomColorJitter);

 public:
  explicit RandomColorJitterImpl(RandomColorJitterOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// The steps (nullptr where the factor is none), named "brightness_factor", … after the argument.
  const std::shared_ptr<RandomBrightnessImpl>& brightness() const { return brightness_; }
  const std::shared_ptr<RandomContrastImpl>& contrast() const { return contrast_; }
  const std::shared_ptr<RandomSaturationImpl>& saturation() const { return saturation_; }
  const std::shared_ptr<RandomHueImpl>& hue() const { return hue_; }
  RandomColorJitterOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::shared_ptr<RandomBrightnessImpl> brightness_;
  std::shared_ptr<RandomContrastImpl> contrast_;
  std::shared_ptr<RandomSaturationImpl> saturation_;
  std::shared_ptr<RandomHueImpl> hue_;
};
TORCH_MODULE(RandomColorJitter);

}  // namespace torchfit
