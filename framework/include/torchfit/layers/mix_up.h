#pragma once
/// @file mix_up.h
/// MixUp — blends each image with another of its batch in training, as keras.layers.MixUp (Keras 3); with
/// mix() the labels too, as Keras's MixUp on {"images", "labels"} in a data pipeline.
#include <utility>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/image_augmentation.h>

namespace torchfit {

/// Options of MixUp (Keras 3's arguments and defaults).
struct MixUpOptions : LayerOptions<MixUpOptions> {
  /// Beta(alpha, alpha)'s parameter, a number > 0 (Keras's docstring says between 0 and 1; its code takes any
  /// value and its Beta needs > 0). Default 0.2.
  TORCH_ARG(double, alpha) = 0.2;

 public:
  template <typename Args>
  void args(Args& a) {
    a("alpha", alpha());
  }
};

/// One batch's draws, in Keras's order.
struct MixUpDraws {
  /// (N) int64: the partner of each sample (Keras's random.shuffle of arange(N)).
  at::Tensor permutation;
  /// (N): each sample's own share w ~ Beta(alpha, alpha).
  at::Tensor weights;
};

/// In train(): a random permutation p of the batch and per sample w ~ Beta(alpha, alpha) (beta_draws), then
/// images w·x + (1 − w)·x[p] (Keras 3's MixUp.get_random_transformation and transform_images). In eval():
/// the input. Input (N, C, H, W) [Keras (H, W, C)], output the same. Inside a model only the images pass
/// through a layer, so only they mix, as in Keras; mix() mixes a batch's labels with the same draws (Keras's
/// transform_labels), for a custom Trainer::train_step (docs/data_pipeline.md, "Mixing labels").
/// Keras's `seed` is not read (LibTorch's CPU generator). Errors: ConfigError naming the layer for an alpha
/// that is not a number > 0 (construction), a non-image input (build); for mix(), labels that are not
/// (N, K) floating point.
/// Source: keras/src/layers/preprocessing/image_preprocessing/mix_up.py.
class MixUpImpl : public ImageAugmentation {
  TORCHFIT_LAYER_CLASS(MixUp);

 public:
  explicit MixUpImpl(MixUpOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// The draws for a batch of N = images.size(0), on the images' device.
  MixUpDraws draw(const at::Tensor& images) const;
  /// images (N, C, H, W) mixed with `draws`: w·x + (1 − w)·x[p].
  at::Tensor mix_images(const at::Tensor& images, const MixUpDraws& draws) const;
  /// {images, labels} mixed with the same draws: labels (N, K) one-hot or soft, w·y + (1 − w)·y[p]. Always
  /// mixes (Keras's layer called on {"images", "labels"} outside a model, whose training defaults to true).
  std::pair<at::Tensor, at::Tensor> mix(const at::Tensor& images, const at::Tensor& labels,
                                        const MixUpDraws& draws) const;
  /// The same with this batch's draws.
  std::pair<at::Tensor, at::Tensor> mix(const at::Tensor& images, const at::Tensor& labels) const {
    return mix(images, labels, draw(images));
  }
  MixUpOptions options;

 protected:
  at::Tensor augment(const at::Tensor& x) override { return mix_images(x, draw(x)); }
};
TORCH_MODULE(MixUp);

}  // namespace torchfit
