#pragma once
/// @file resizing.h
/// Resizing — resizes images to a fixed height and width, as keras.layers.Resizing (Keras 3).
#include <array>
#include <memory>
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
  /// tf.image.resize's method (Keras 3's TensorFlow backend calls it): "bilinear" (default), "nearest",
  /// "bicubic", "area", "lanczos3", "lanczos5", and, beyond Keras 3's Resizing (which refuses them; its
  /// image_dataset_from_directory takes them), "gaussian" and "mitchellcubic".
  TORCH_ARG(std::string, interpolation) = "bilinear";
  /// Crop the largest centred box of the target's aspect ratio first (Keras's smart_resize). Default false.
  TORCH_ARG(bool, crop_to_aspect_ratio) = false;
  /// Pad to the target's aspect ratio first, the image centred, with fill_value. Default false.
  TORCH_ARG(bool, pad_to_aspect_ratio) = false;
  /// How pad_to_aspect_ratio fills: "constant" only (Keras 3's only mode for Resizing).
  TORCH_ARG(std::string, fill_mode) = "constant";
  /// The padded value. Default 0.
  TORCH_ARG(double, fill_value) = 0.0;
  /// tf.image.resize's antialias: when downsampling, the kernel is stretched by in/out (a low-pass filter as
  /// well as the interpolation; bilinear becomes the triangle kernel, bicubic Keys' cubic through
  /// ScaleAndTranslate). No effect for "nearest" and "area" (TensorFlow ignores it there). Default false.
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
/// As Keras 3's ops.image.resize on its TensorFlow backend, i.e. tf.image.resize (TensorFlow's kernels in
/// tensorflow/core/kernels/image/): "bilinear" samples source (i + 0.5)·H/height − 0.5 between its clamped
/// neighbours, "nearest" takes floor((i + 0.5)·H/height) (half-pixel centres; LibTorch's bilinear without
/// align_corners and nearest-exact compute the same). The other methods are one (out × in) weight matrix per
/// axis, y = Wy · x · Wxᵀ (computed once per size, float64, cast to the input's dtype): "bicubic" is
/// ResizeBicubic (half-pixel, Keys a = −0.5 from its 1024-entry table, taps outside the image weighted 0
/// and the rest renormalised); "area" ResizeArea (each output the mean of the input box it covers,
/// fractional cells by their share); "lanczos3", "lanczos5", "gaussian", "mitchellcubic" ScaleAndTranslate
/// with sampling_kernels.h's kernels; antialias (bilinear → "triangle", bicubic → "keyscubic", the others
/// as they are) stretches the kernel by max(H/height, 1). Half-precision inputs on the CPU are resized in
/// float32; integer inputs give float32 (TensorFlow's). crop_to_aspect_ratio first keeps
/// the centred box of min(H, ⌊W·height/width⌋) rows and min(W, ⌊H·width/height⌋) columns (at least 1);
/// pad_to_aspect_ratio first centres the image in max(H, ⌊W·height/width⌋) × max(W, ⌊H·width/height⌋)
/// filled with fill_value (offsets ⌊(box − size)/2⌋). No parameters. Errors: ConfigError naming the layer and
/// the value for a size ≤ 0, another interpolation, both aspect-ratio modes, another fill_mode
/// (construction), a non-image input (build).
class ResizingImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Resizing);

 public:
  /// ONNX: (Slice or Pad,) then bilinear: Resize (linear, half_pixel) by the built size's scales; nearest:
  /// a Gather of the source rows and one of the columns; the weight-matrix methods: Transpose to
  /// (N, C, W, H), MatMul by the constant Wyᵀ, Transpose back, MatMul by the constant Wxᵀ (float32).
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
  /// The weight matrix from `in` to `out` samples in `like`'s dtype and device, cached (thread-safe:
  /// image_dataset_from_directory's workers share the layer).
  at::Tensor axis_weights(int64_t in, int64_t out, const at::Tensor& like) const;
  struct WeightCache;
  std::shared_ptr<WeightCache> cache_;
};
TORCH_MODULE(Resizing);

}  // namespace torchfit
