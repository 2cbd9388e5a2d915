#pragma once
/// @file random_erasing.h
/// RandomErasing — erases a random box of some images in training, as keras.layers.RandomErasing (Keras 3).
#include <initializer_list>
#include <vector>

#include <torch/nn/pimpl.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// RandomErasing's fill_value: none (Keras's None, the default: noise), one number, or three (one per channel
/// of an RGB image). Written back as null, a number or the list.
struct ErasingFillValue {
  ErasingFillValue() = default;
  ErasingFillValue(double v) : values{v} {}                         // NOLINT: .fill_value(0.0)
  ErasingFillValue(std::initializer_list<double> v) : values(v) {}  // NOLINT: .fill_value({1, 2, 3})
  explicit ErasingFillValue(std::vector<double> v) : values(std::move(v)) {}
  /// Empty (none), one number or three.
  std::vector<double> values;
  bool operator==(const ErasingFillValue& other) const { return values == other.values; }
};
void to_json(nlohmann::json& j, const ErasingFillValue& f);
/// From null, a number or a list of three numbers. Errors: std::invalid_argument otherwise (the config reader
/// names the layer and field).
void from_json(const nlohmann::json& j, ErasingFillValue& f);

/// Options of RandomErasing (Keras 3's arguments and defaults).
struct RandomErasingOptions : LayerOptions<RandomErasingOptions> {
  /// The range of each image's erasing probability p: a number f in [0, 1] ([0, f]) or a pair [lower, upper]
  /// (refused when lower > 1 or upper < 0), Keras's _set_factor with _FACTOR_BOUNDS (0, 1). An image is erased
  /// when a uniform draw is below its p ~ U[lower, upper): the default 1.0 erases half the images on average
  /// (Keras's docstring says "always"; its code draws p from [0, 1]).
  TORCH_ARG(KerasFactor, factor) = KerasFactor(1.0);
  /// The range of the box's squared side fractions: a number s in [0, 1] ([0, s]) or a pair of numbers in
  /// [0, 1] (Keras checks it as factor, refusing a pair only when lower > 1 or upper < 0; torchfit refuses an end
  /// outside [0, 1]: above 1 the box covers the whole image, below 0 it has no size). The box is sqrt(a)·W wide
  /// and sqrt(b)·H high, a and b drawn separately from U[lower, upper) (Keras calls it an aspect ratio range; its
  /// code draws these two). Default [0.02, 0.33].
  TORCH_ARG(KerasFactor, scale) = KerasFactor(0.02, 0.33);
  /// The erased pixels' value: none (default) = standard normal noise · high of value_range, one number, or
  /// three (per channel, C = 3); clipped to value_range.
  TORCH_ARG(ErasingFillValue, fill_value) = ErasingFillValue();
  /// [low, high] of the input's values, low < high. Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};

 public:
  template <typename Args>
  void args(Args& a) {
    a("factor", factor());
    a("scale", scale());
    a("fill_value", fill_value());
    a("value_range", value_range());
  }
};

/// One batch's random draws, in the order Keras draws them.
struct ErasingDraws {
  /// (N, 2): the squared side fractions of the box's width and height, U[scale) (Keras's mix_weight).
  at::Tensor areas;
  /// (N, 2): U[0, 1) draws placing the box: left = u_x·(W − w), top = u_y·(H − h).
  at::Tensor starts;
  /// (N) bool: whether each image is erased (a uniform draw < its probability p ~ U[factor)).
  at::Tensor applies;
  /// (N, C, H, W) standard normal noise when fill_value is none, else undefined.
  at::Tensor noise;
};

/// In train(): per image a box w = sqrt(a)·W by h = sqrt(b)·H (real-valued) at left = u_x·(W − w), top =
/// u_y·(H − h) — pixels with left ≤ column < left + w and top ≤ row < top + h — replaced in every channel by
/// the fill (noise·high or fill_value, clipped to value_range) when the image is erased (Keras 3's
/// RandomErasing.get_random_transformation and transform_images). In eval(): the input. Input (N, C, H, W)
/// [Keras (H, W, C)], output the same. Keras's `seed` is not read (LibTorch's CPU generator, uniform_draws).
/// Errors: ConfigError naming the layer and value for a factor or scale out of range, a fill_value of 2 or more than 3
/// numbers or not finite, a value_range that is not [low, high] of finite numbers with low < high (construction), a
/// non-image input, or three fill values for C ≠ 3 (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_erasing.py.
class RandomErasingImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(RandomErasing);

 public:
  explicit RandomErasingImpl(RandomErasingOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// The draws for a batch x (N, C, H, W), on its device.
  ErasingDraws draw(const at::Tensor& x) const;
  /// x with the boxes of `draws` erased where it applies.
  at::Tensor erase(const at::Tensor& x, const ErasingDraws& draws) const;
  RandomErasingOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return erase(x, draw(x)); }
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::pair<double, double> range_, scale_, value_range_;
};
TORCH_MODULE(RandomErasing);

}  // namespace torchfit
