#pragma once
/// @file cut_mix.h
/// CutMix — pastes a random box of another image of the batch into each image in training, as
/// keras.layers.CutMix (Keras 3); with mix() the labels too, mixed by the box's area, as Keras's CutMix on
/// {"images", "labels"} in a data pipeline.
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of CutMix (Keras 3's arguments and defaults).
struct CutMixOptions : LayerOptions<CutMixOptions> {
  /// The range of the batch's Beta parameter α: a number f in [0, 1] ([0, f]) or a pair [lower, upper]
  /// (refused when lower > 1 or upper < 0, Keras's _set_factor with _FACTOR_BOUNDS (0, 1), and when lower < 0:
  /// Keras takes it, and a negative α has no Beta). Default 1.0.
  TORCH_ARG(KerasFactor, factor) = KerasFactor(1.0);

 public:
  template <typename Args>
  void args(Args& a) {
    a("factor", factor());
  }
};

/// One batch's draws, in Keras's order.
struct CutMixDraws {
  /// The batch's α = U[lower, upper) + 1e-6 (one per batch, as Keras).
  double alpha = 0.0;
  /// (N): λ ~ Beta(α, α) per image; the box is sqrt(1 − λ) of each side.
  at::Tensor lambdas;
  /// (N, 2): U[0, 1) draws placing the box: left = u_x·(W − w), top = u_y·(H − h).
  at::Tensor starts;
  /// (N) int64: the image each one's box comes from (Keras's random.shuffle of arange(N)).
  at::Tensor permutation;
};

/// In train(): α = U[lower, upper) + 1e-6 for the batch, per image λ ~ Beta(α, α) (beta_draws) and a box
/// w = sqrt(1 − λ)·W by h = sqrt(1 − λ)·H (real-valued) at left = u_x·(W − w), top = u_y·(H − h) — pixels with
/// left ≤ column < left + w and top ≤ row < top + h — then a permutation p of the batch; each image's box
/// pixels are replaced by image p's (Keras 3's CutMix.get_random_transformation and transform_images). In
/// eval(): the input. Input (N, C, H, W) [Keras (H, W, C)], output the same. Inside a model only the images
/// pass through, as in Keras; mix() mixes the labels with the same draws, weight 1 − w·h/(W·H) for the
/// image's own (Keras's transform_labels), for a custom Trainer::train_step (docs/data_pipeline.md, "Mixing
/// labels"). Keras's `seed` is not read (LibTorch's CPU generator). Errors: ConfigError naming the layer for a factor
/// out of range or with lower < 0 (construction), a non-image input (build); for mix(), labels that are not (N, K)
/// floating point.
/// Source: keras/src/layers/preprocessing/image_preprocessing/cut_mix.py.
class CutMixImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(CutMix);

 public:
  explicit CutMixImpl(CutMixOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// The draws for a batch of N = images.size(0), on the images' device.
  CutMixDraws draw(const at::Tensor& images) const;
  /// images (N, C, H, W) with each box replaced by its partner's.
  at::Tensor mix_images(const at::Tensor& images, const CutMixDraws& draws) const;
  /// {images, labels} mixed with the same draws: labels (N, K) one-hot or soft, v·y + (1 − v)·y[p] with v =
  /// 1 − w·h/(W·H). Always mixes (Keras's layer called on {"images", "labels"} outside a model).
  std::pair<at::Tensor, at::Tensor> mix(const at::Tensor& images, const at::Tensor& labels,
                                        const CutMixDraws& draws) const;
  /// The same with this batch's draws.
  std::pair<at::Tensor, at::Tensor> mix(const at::Tensor& images, const at::Tensor& labels) const {
    return mix(images, labels, draw(images));
  }
  CutMixOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return mix_images(x, draw(x)); }

 private:
  /// The boxes of `draws` for images (H, W): masks (N, 1, H, W) and the label weights v (N).
  std::pair<at::Tensor, at::Tensor> boxes(const CutMixDraws& draws, const at::Tensor& images) const;
  std::pair<double, double> range_;
};
TORCH_MODULE(CutMix);

}  // namespace torchfit
