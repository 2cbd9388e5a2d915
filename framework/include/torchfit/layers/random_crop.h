#pragma once
/// @file random_crop.h
/// RandomCrop — crops a random window of each batch in training, as keras.layers.RandomCrop (Keras 3).
#include <memory>
#include <utility>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>
#include <torchfit/layers/resizing.h>

namespace torchfit {

/// Options of RandomCrop (Keras 3's arguments). Required: height, width.
struct RandomCropOptions : LayerOptions<RandomCropOptions> {
  RandomCropOptions(int64_t height, int64_t width) : height_(height), width_(width) {}
  /// For the registry only (layer_args.h): leaves height and width unset, to be read from a config.
  explicit RandomCropOptions(FromConfig) : height_(0), width_(0) {}
  /// Output rows and columns (> 0).
  TORCH_ARG(int64_t, height);
  TORCH_ARG(int64_t, width);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("height", height());
    a.required("width", width());
  }
};

/// In train(), as Keras 3's RandomCrop: when the input is larger than the window on both axes (H > height and
/// W > width), ONE window per batch, its top ⌊u·(H − height + 1)⌋ then its left ⌊u'·(W − width + 1)⌋ (u, u'
/// uniform draws); otherwise Keras's fallback: the start of the centred box of the target's aspect ratio
/// (rows min(H, ⌊W·height/width⌋), columns min(W, ⌊H·width/height⌋), at least 1, start ⌊(size − box)/2⌋), the
/// height × width slice from there (cut at the image's edge) and, when that is smaller, a bilinear Resizing
/// to (height, width). In eval(): Keras's smart_resize (Resizing with crop_to_aspect_ratio, bilinear), which
/// is the input when it is already height × width — Keras 3 itself returns the input unchanged in
/// inference whatever its size, which breaks the layers after it; tf.keras 2's RandomCrop smart-resizes.
/// Input (N, C, H, W) [Keras (H, W, C)], output (N, C, height, width) [Keras (height, width, C)]. Keras's
/// `seed` is not read (LibTorch's CPU generator, uniform_draws). ONNX: the smart_resize (inference).
/// Errors: ConfigError naming the layer for a size ≤ 0 (construction) or a non-image input (build).
/// Source: keras/src/layers/preprocessing/image_preprocessing/random_crop.py.
class RandomCropImpl : public Layer {
  TORCHFIT_LAYER_CLASS(RandomCrop);

 public:
  explicit RandomCropImpl(RandomCropOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  bool onnx_holds_built_size() const override { return true; }
  /// The window's (top, left) for a batch of h × w images: drawn when h > height and w > width (LibTorch's CPU
  /// generator, as uniform_draws), else Keras's fallback box start. `like` is unused (the batch).
  std::pair<int64_t, int64_t> draw_window(int64_t h, int64_t w, const at::Tensor& like) const;
  /// Keras 3's _random_crop from (top, left): the height × width slice, resized (bilinear) when it is smaller.
  at::Tensor crop_at(const at::Tensor& x, int64_t top, int64_t left) const;
  RandomCropOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::shared_ptr<ResizingImpl> smart_resize_;  // inference
  std::shared_ptr<ResizingImpl> resize_;        // a training slice smaller than the window
};
TORCH_MODULE(RandomCrop);

}  // namespace torchfit
