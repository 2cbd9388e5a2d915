#pragma once
/// @file equalization.h
/// Equalization — histogram equalization of each channel in training, as keras.layers.Equalization (Keras 3).
#include <utility>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of Equalization (Keras 3's arguments and defaults; every argument optional).
struct EqualizationOptions : LayerOptions<EqualizationOptions> {
  /// [low, high] of the input's values (sorted, as Keras), mapped to [0, 255] around the equalization.
  /// Default [0, 255].
  TORCH_ARG(std::vector<double>, value_range) = std::vector<double>{0.0, 255.0};
  /// Histogram bins, in [1, EqualizationImpl::max_bins] = [1, 65536] (Keras: any; torchfit bounds it,
  /// docs/data_pipeline.md: the values are mapped to [0, 255], and every bin costs memory on each step). Default
  /// 256.
  TORCH_ARG(int64_t, bins) = 256;

 public:
  template <typename Args>
  void args(Args& a) {
    a("value_range", value_range());
    a("bins", bins());
  }
};

/// Deterministic. In train(), per channel over the WHOLE BATCH (Keras 3's _equalize_channel takes images[..., i],
/// all images together): v = x mapped from value_range to [0, 255]; the histogram of int32(float32(v)·(bins −
/// 1)/255) clipped to [0, bins − 1]; with at most one non-empty bin v unchanged, else cdf = its cumulative sum,
/// c0 = the count of the first non-empty bin, lut = clip(round((cdf − c0)·255 / (cdf_last − c0, or 1 when 0)),
/// 0, 255) and v ↦ lut[int32(clip(v/255·(bins − 1), 0, bins − 1))]; mapped back (Equalization.transform_images,
/// round half to even). In eval(): the input — Keras 3's code equalizes only when `training` (its docstring
/// says it applies at inference too; torchfit follows the code). Input (N, C, H, W) [Keras (H, W, C)], output
/// the same. ONNX: none, the input passes through (inference). Errors: ConfigError naming the layer for a value_range
/// that is not two finite, different numbers or bins outside [1, 65536] (construction), a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/equalization.py.
class EqualizationImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(Equalization);

 public:
  /// The most bins torchfit takes: a 16-bit image's levels (Keras has no bound; bins = 1e9 would ask for
  /// gigabytes of histogram on every training step).
  static constexpr int64_t max_bins = 65536;
  explicit EqualizationImpl(EqualizationOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// x (N, C, H, W) equalized, each channel's histogram over the whole batch: the training forward.
  at::Tensor equalize(const at::Tensor& x) const;
  EqualizationOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return equalize(x); }

 private:
  /// One channel (N, H, W) already on the [0, 255] scale, equalized.
  at::Tensor equalize_channel(const at::Tensor& v) const;
  std::pair<double, double> value_range_;
};
TORCH_MODULE(Equalization);

}  // namespace torchfit
