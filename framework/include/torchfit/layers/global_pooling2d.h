#pragma once
/// @file global_pooling2d.h
/// GlobalAveragePooling1D/2D/3D and GlobalMaxPooling1D/2D/3D — as the keras.layers classes of the same names.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options shared by the global pooling layers, with Keras's default.
struct GlobalPoolingOptions : LayerOptions<GlobalPoolingOptions> {
  /// Keep the pooled axes with size 1 (Keras `keepdims`): an image gives (1, 1, C), a sequence (1, C), a
  /// volume (1, 1, 1, C).
  /// Default false: (C).
  TORCH_ARG(bool, keepdims) = false;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("keepdims", keepdims());
  }
};
/// The name the 2-D layers' options had before the 1-D ones joined them.
using GlobalPooling2DOptions = GlobalPoolingOptions;

/// The global pooling family: the mean or maximum of each channel over every position — the pixels of an
/// image (Keras (H, W, C), held (N, C, H, W)), the steps of a sequence (Keras (steps, C), held
/// (N, steps, C)) or the voxels of a volume (Keras (D, H, W, C), held (N, D, H, W, C)) — giving (N, C)
/// [Keras (C)], or with keepdims (N, C, 1, 1) [(1, 1, C)] / (N, 1, C) [(1, C)] / (N, 1, 1, 1, C) [(1, 1, 1, C)].
/// No parameters. Errors: ConfigError naming the layer for an input of another rank.
class GlobalPooling : public Layer {
 public:
  /// ONNX: images GlobalAveragePool / GlobalMaxPool (→ Flatten without keepdims); volumes the same on an
  /// (N, C, D·H·W, 1) image (Transpose, Reshape; Reshaped to (N, 1, 1, 1, C) with keepdims); sequences ReduceMean /
  /// ReduceMax over the steps (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  at::Tensor forward(const at::Tensor& x) override;
  /// GlobalAveragePooling1D takes a Keras mask (N, steps): the mean of the kept steps only, Σ kept / count
  /// (NaN for a sequence masked entirely, as Keras); the output has no mask. The other classes do not
  /// support masks (Keras: the mask stops there).
  bool supports_masking() const override { return spatial_rank_ == 1 && !max_; }
  bool uses_mask() const override { return supports_masking(); }
  at::Tensor compute_mask(const std::vector<at::Tensor>&, const std::vector<at::Tensor>&) const override { return {}; }
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  nlohmann::json config() const override { return base_config(options); }
  GlobalPoolingOptions options;

 protected:
  /// `spatial_rank` 1 (sequences), 2 (images) or 3 (volumes); `max`: the maximum, else the mean.
  GlobalPooling(const char* class_name, GlobalPoolingOptions options, int spatial_rank, bool max);
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> pooled_dims() const;
  int spatial_rank_;
  bool max_;
};

/// Mean over all pixels of each channel (see GlobalPooling).
class GlobalAveragePooling2DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalAveragePooling2D);
  explicit GlobalAveragePooling2DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 2, false) {}
};
TORCH_MODULE(GlobalAveragePooling2D);

/// Maximum over all pixels of each channel (see GlobalPooling).
class GlobalMaxPooling2DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalMaxPooling2D);
  explicit GlobalMaxPooling2DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 2, true) {}
};
TORCH_MODULE(GlobalMaxPooling2D);

/// Mean over all steps of each channel of a sequence (see GlobalPooling).
class GlobalAveragePooling1DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalAveragePooling1D);
  explicit GlobalAveragePooling1DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 1, false) {}
};
TORCH_MODULE(GlobalAveragePooling1D);

/// Maximum over all steps of each channel of a sequence (see GlobalPooling).
class GlobalMaxPooling1DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalMaxPooling1D);
  explicit GlobalMaxPooling1DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 1, true) {}
};
TORCH_MODULE(GlobalMaxPooling1D);

/// Mean over all voxels of each channel of a volume (see GlobalPooling).
class GlobalAveragePooling3DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalAveragePooling3D);
  explicit GlobalAveragePooling3DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 3, false) {}
};
TORCH_MODULE(GlobalAveragePooling3D);

/// Maximum over all voxels of each channel of a volume (see GlobalPooling).
class GlobalMaxPooling3DImpl : public GlobalPooling {
  TORCHFIT_LAYER_CLASS(GlobalMaxPooling3D);
  explicit GlobalMaxPooling3DImpl(GlobalPoolingOptions o = {}) : GlobalPooling(keras_class_name, o, 3, true) {}
};
TORCH_MODULE(GlobalMaxPooling3D);

}  // namespace torchfit
