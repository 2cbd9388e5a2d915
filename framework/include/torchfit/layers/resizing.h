#pragma once
/// @file resizing.h
/// Resizing — resizes images to a fixed height and width, as keras.layers.Resizing (Keras 3).
#include <array>
#include <string>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Resizing (Keras 3's arguments and defaults). Required: height, width.
struct ResizingOptions : LayerOptions<ResizingOptions> {
  ResizingOptions(int64_t height, int64_t width) : height_(height), width_(width) {}
  /// For the registry only (layer_args.h): leaves height and width unset, to be read from a config.
  explicit ResizingOptions(FromConfig) : height_(0), width_(0) {}
  /// Output rows and columns (> 0).
  TORCH_ARG(int64_t, height);
  TORCH_ARG(int64_t, width);
  /// "bilinear" (default) or "nearest" (tf.image.resize's, half-pixel centres, no antialiasing).
  TORCH_ARG(std::string, interpolation) = "bilinear";
  /// Crop the largest centred box of the target's aspect ratio first (Keras's smart_resize). Default false.
  TORCH_ARG(bool, crop_to_aspect_ratio) = false;
  /// Pad to the target's aspect ratio first, the image centred, with fill_value. Default false.
  TORCH_ARG(bool, pad_to_aspect_ratio) = false;
  /// How pad_to_aspect_ratio fills: "constant" only (Keras 3's only mode for Resizing).
  TORCH_ARG(std::string, fill_mode) = "constant";
  /// The padded value. Default 0.
  TORCH_ARG(double, fill_value) = 0.0;
  /// Antialiased downsampling: false only (true is refused).
  TORCH_ARG(bool, antialias) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("height", height());
    a.required("width", width());
    a("interpolation", interpolation());
    a("crop_to_aspect_ratio", crop_to_aspect_ratio());
    a("pad_to_aspect_ratio", pad_to_aspect_ratio());
    a("fill_mode", fill_mode());
    a("fill_value", fill_value());
    a("antialias", antialias());
  }
};

/// Input (N, C, H, W) [Keras (H, W, C)] of any H, W; output (N, C, height, width) [Keras (height, width, C)].
/// As Keras 3's ops.image.resize: "bilinear" samples source (i + 0.5)·H/height − 0.5 between its clamped
/// neighbours, "nearest" takes floor((i + 0.5)·H/height) (TensorFlow's half-pixel centres; LibTorch's
/// bilinear without align_corners and nearest-exact compute the same). crop_to_aspect_ratio first keeps
/// the centred box of min(H, ⌊W·height/width⌋) rows and min(W, ⌊H·width/height⌋) columns (at least 1);
/// pad_to_aspect_ratio first centres the image in max(H, ⌊W·height/width⌋) × max(W, ⌊H·width/height⌋)
/// filled with fill_value (offsets ⌊(box − size)/2⌋). No parameters. Errors: ConfigError naming the layer for
/// a size ≤ 0, another interpolation, both aspect-ratio modes, another fill_mode, antialias (construction),
/// a non-image input (build).
class ResizingImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Resizing);

 public:
  /// ONNX: (Slice or Pad,) then bilinear: Resize (linear, half_pixel) by the built size's scales; nearest:
  /// a Gather of the source rows and one of the columns (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// True: the Resize scales (and a crop's or pad's box) are those of the built size.
  bool onnx_holds_built_size() const override { return true; }
  explicit ResizingImpl(ResizingOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  ResizingOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  /// The box (top, left, rows, cols) of an h × w image cropped or padded to the target's aspect ratio
  /// (the whole image without either mode).
  std::array<int64_t, 4> box(int64_t h, int64_t w) const;
};
TORCH_MODULE(Resizing);

}  // namespace torchfit
