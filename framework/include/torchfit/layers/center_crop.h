#pragma once
/// @file center_crop.h
/// CenterCrop — the central height × width window of an image, as keras.layers.CenterCrop (Keras 3).
#include <memory>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>
#include <torchfit/layers/resizing.h>

namespace torchfit {

/// Options of CenterCrop (Keras 3's arguments). Required: height, width.
struct CenterCropOptions : LayerOptions<CenterCropOptions> {
  CenterCropOptions(int64_t height, int64_t width) : height_(height), width_(width) {}
  /// For the registry only (layer_args.h): leaves height and width unset, to be read from a config.
  explicit CenterCropOptions(FromConfig) : height_(0), width_(0) {}
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

/// Input (N, C, H, W) [Keras (H, W, C)]; output (N, C, height, width) [Keras (height, width, C)]. As Keras 3's
/// CenterCrop.transform_images: when H ≥ height and W ≥ width, the rows from ⌊(H − height)/2⌋ and the columns
/// from ⌊(W − width)/2⌋ (the odd row or column left over goes after the window); otherwise Keras's
/// smart_resize — the largest centred box of the target's aspect ratio, resized bilinearly (TensorFlow's
/// half-pixel centres), which is Resizing with crop_to_aspect_ratio. A preprocessing layer: the same in
/// training and inference. No parameters. Errors: ConfigError naming the layer for a size ≤ 0
/// (construction) or a non-image input (build).
class CenterCropImpl : public Layer {
  TORCHFIT_LAYER_CLASS(CenterCrop);

 public:
  explicit CenterCropImpl(CenterCropOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  /// ONNX: a Slice of the window, or the Resizing (Slice + Resize) of a smaller image.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// True: the window's offsets (or the resize's scales) are those of the built size.
  bool onnx_holds_built_size() const override { return true; }
  CenterCropOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  /// Whether an h × w image is smaller than the window on an axis (then smart_resize).
  bool smaller(int64_t h, int64_t w) const;
  /// Keras's smart_resize: Resizing with crop_to_aspect_ratio (built when the built input is smaller).
  std::shared_ptr<ResizingImpl> resize_;
};
TORCH_MODULE(CenterCrop);

}  // namespace torchfit
