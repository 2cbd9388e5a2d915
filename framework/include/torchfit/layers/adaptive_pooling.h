#pragma once
/// @file adaptive_pooling.h
/// AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D — as the keras.layers classes of the same
/// names (Keras 3.15, keras/src/layers/pooling/base_adaptive_pooling.py), channels_last only.
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of the adaptive pooling layers over `D` spatial axes. Required: output_size.
template <size_t D>
struct AdaptivePoolingOptions : LayerOptions<AdaptivePoolingOptions<D>> {
  /// `output_size`: the output's spatial size, an int (every axis) or D ints, each >= 1.
  explicit AdaptivePoolingOptions(torch::ExpandingArray<D> output_size) : output_size_(output_size) {}
  /// For the registry only (layer_args.h): leaves output_size unset, to be read from a config.
  explicit AdaptivePoolingOptions(FromConfig) : output_size_(0) {}
  /// Keras `output_size`: steps (1-D), (height, width) (2-D), (depth, height, width) (3-D). Config: a list
  /// of D integers, as Keras 3.15 writes it; an integer is read too.
  TORCH_ARG(torch::ExpandingArray<D>, output_size);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("output_size", output_size());
  }
};
using AdaptivePooling1DOptions = AdaptivePoolingOptions<1>;
using AdaptivePooling2DOptions = AdaptivePoolingOptions<2>;
using AdaptivePooling3DOptions = AdaptivePoolingOptions<3>;

/// The adaptive pooling family: the mean or maximum of each channel over `output_size` bins per spatial
/// axis, bin i of an axis of length L covering [floor(i·L/out), ceil((i+1)·L/out)) — Keras's
/// ops.adaptive_avg_pool / adaptive_max_pool (the bins of PyTorch's adaptive pooling, whose LibTorch
/// kernels compute it). Bins overlap when L is not a multiple of out; out may exceed L.
///   1-D: Keras (steps, C) → (out, C), held (N, steps, C) → (N, out, C);
///   2-D: Keras (H, W, C) → (out_h, out_w, C), held (N, C, H, W) → (N, C, out_h, out_w);
///   3-D: Keras (D, H, W, C) → (out_d, out_h, out_w, C), held in Keras's order (N, D, H, W, C).
/// No parameters. Errors: ConfigError naming the layer for an output_size below 1 (construction) or an
/// input of another rank (build). Keras's data_format other than channels_last is refused by the Keras
/// config reader.
template <size_t D>
class AdaptivePooling : public Layer {
 public:
  /// ONNX (sequences and volumes between Transposes to channels first and back): when every axis length is
  /// a multiple of its output size, one AveragePool / MaxPool with kernel = stride = L/out; otherwise, axis
  /// by axis, per bin a Slice and an AveragePool / MaxPool over the bin's length, and a Concat (exact: the
  /// bins are boxes).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// True: its windows (or bins) are the built sizes divided by the output size.
  bool onnx_holds_built_size() const override { return true; }
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  AdaptivePoolingOptions<D> options;

 protected:
  /// `max`: the maximum, else the mean.
  AdaptivePooling(const char* class_name, AdaptivePoolingOptions<D> options, bool max);
  Shape build_impl(const Shape& input_shape) override;

 private:
  bool max_;
  std::string export_bins(io::OnnxGraph& graph, std::string x) const;
};

/// Mean over adaptive bins of a sequence (see AdaptivePooling).
class AdaptiveAveragePooling1DImpl : public AdaptivePooling<1> {
  TORCHFIT_LAYER_CLASS(AdaptiveAveragePooling1D);
  explicit AdaptiveAveragePooling1DImpl(AdaptivePooling1DOptions o) : AdaptivePooling(keras_class_name, o, false) {}
};
TORCH_MODULE(AdaptiveAveragePooling1D);

/// Maximum over adaptive bins of a sequence (see AdaptivePooling).
class AdaptiveMaxPooling1DImpl : public AdaptivePooling<1> {
  TORCHFIT_LAYER_CLASS(AdaptiveMaxPooling1D);
  explicit AdaptiveMaxPooling1DImpl(AdaptivePooling1DOptions o) : AdaptivePooling(keras_class_name, o, true) {}
};
TORCH_MODULE(AdaptiveMaxPooling1D);

/// Mean over adaptive bins of an image (see AdaptivePooling).
class AdaptiveAveragePooling2DImpl : public AdaptivePooling<2> {
  TORCHFIT_LAYER_CLASS(AdaptiveAveragePooling2D);
  explicit AdaptiveAveragePooling2DImpl(AdaptivePooling2DOptions o) : AdaptivePooling(keras_class_name, o, false) {}
};
TORCH_MODULE(AdaptiveAveragePooling2D);

/// Maximum over adaptive bins of an image (see AdaptivePooling).
class AdaptiveMaxPooling2DImpl : public AdaptivePooling<2> {
  TORCHFIT_LAYER_CLASS(AdaptiveMaxPooling2D);
  explicit AdaptiveMaxPooling2DImpl(AdaptivePooling2DOptions o) : AdaptivePooling(keras_class_name, o, true) {}
};
TORCH_MODULE(AdaptiveMaxPooling2D);

/// Mean over adaptive bins of a volume (see AdaptivePooling).
class AdaptiveAveragePooling3DImpl : public AdaptivePooling<3> {
  TORCHFIT_LAYER_CLASS(AdaptiveAveragePooling3D);
  explicit AdaptiveAveragePooling3DImpl(AdaptivePooling3DOptions o) : AdaptivePooling(keras_class_name, o, false) {}
};
TORCH_MODULE(AdaptiveAveragePooling3D);

/// Maximum over adaptive bins of a volume (see AdaptivePooling).
class AdaptiveMaxPooling3DImpl : public AdaptivePooling<3> {
  TORCHFIT_LAYER_CLASS(AdaptiveMaxPooling3D);
  explicit AdaptiveMaxPooling3DImpl(AdaptivePooling3DOptions o) : AdaptivePooling(keras_class_name, o, true) {}
};
TORCH_MODULE(AdaptiveMaxPooling3D);

}  // namespace torchfit
