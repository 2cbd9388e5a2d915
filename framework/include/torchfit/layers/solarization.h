#pragma once
/// @file solarization.h
/// Solarization — inverts the values above a random threshold after a random addition in training, as
/// keras.layers.Solarization (Keras 3).
#include <utility>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of Solarization (Keras 3's arguments and defaults; every argument optional).
struct SolarizationOptions : LayerOptions<SolarizationOptions> {
  /// A number f in [0, 1] (range [0, f]) or a pair of numbers in [0, 1] (sorted). Default 0.
  TORCH_ARG(KerasFactor, addition_factor) = KerasFactor(0.0);
  /// As addition_factor. Default 0.
  TORCH_ARG(KerasFactor, threshold_factor) = KerasFactor(0.0);
  /// [low, high] of the input's values (sorted, as Keras), mapped to [0, 255] around the operation.
  /// Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};

 public:
  template <typename Args>
  void args(Args& a) {
    a("addition_factor", addition_factor());
    a("threshold_factor", threshold_factor());
    a("value_range", value_range());
  }
};

/// In train(): per image an addition a ~ U[a_lower, 255·a_upper) and then a threshold t ~ U[t_lower,
/// 255·t_upper) — Keras 3's code scales only the upper bound by 255 — and, on v = x mapped from value_range
/// to [0, 255], r = clip(v + a, 0, 255), r where r < t, else 255 − r, mapped back (Keras 3's
/// Solarization.transform_images). The defaults (0, 0) invert every value. In eval(): the input (Keras applies
/// it in training only). Input (N, C, H, W) [Keras (H, W, C)], output the same. Keras's `seed` is not read
/// (LibTorch's CPU generator, uniform_draws). Errors: ConfigError naming the layer and the field for a factor
/// outside [0, 1], a value_range that is not two finite, different numbers (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/solarization.py.
class SolarizationImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(Solarization);

 public:
  explicit SolarizationImpl(SolarizationOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// n additions (column 0) and thresholds (column 1), both on the [0, 255] scale, on `like`'s device.
  at::Tensor draw_parameters(int64_t n, const at::Tensor& like) const;
  /// x (N, C, H, W) solarized with each image's addition and threshold (`parameters` (N, 2)).
  at::Tensor solarize(const at::Tensor& x, const at::Tensor& parameters) const;
  SolarizationOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return solarize(x, draw_parameters(x.size(0), x)); }

 private:
  std::pair<double, double> addition_, threshold_, value_range_;
};
TORCH_MODULE(Solarization);

}  // namespace torchfit
