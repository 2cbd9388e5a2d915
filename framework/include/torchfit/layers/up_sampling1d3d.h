#pragma once
/// @file up_sampling1d3d.h
/// UpSampling1D (sequences) and UpSampling3D (volumes), as the keras.layers classes of the same names, on
/// the up-sampling layers' base (base_up_sampling.h).
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_up_sampling.h>

namespace torchfit {

/// Options of UpSampling1D. Keras default: size 2.
struct UpSampling1DOptions : LayerOptions<UpSampling1DOptions> {
  UpSampling1DOptions(int64_t size = 2) : size_(size) {}  // NOLINT: UpSampling1DOptions(3)
  /// How many times each step is repeated (> 0). Default 2; written as an int, as Keras.
  TORCH_ARG(int64_t, size);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("size", size());
  }
};

/// Options of UpSampling3D. Keras default: size (2, 2, 2).
struct UpSampling3DOptions : LayerOptions<UpSampling3DOptions> {
  UpSampling3DOptions(torch::ExpandingArray<3> size = 2) : size_(size) {}  // NOLINT: UpSampling3DOptions(3)
  /// Factors (depth, rows, cols) (> 0); an int means all three. Default 2.
  TORCH_ARG(torch::ExpandingArray<3>, size);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("size", size());
  }
};

/// Each step repeated `size` times (keras.layers.UpSampling1D: ops.repeat along the steps): Keras (steps, C)
/// → (steps·size, C), held (N, steps, C). Errors, ONNX Resize: UpSamplingLayer.
class UpSampling1DImpl : public UpSamplingLayer {
  TORCHFIT_LAYER_CLASS(UpSampling1D);

 public:
  explicit UpSampling1DImpl(UpSampling1DOptions opts = {})
      : UpSamplingLayer(keras_class_name, opts.name(), {opts.size()}), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
  }
  nlohmann::json config() const override { return base_config(options); }
  UpSampling1DOptions options;
};
TORCH_MODULE(UpSampling1D);

/// Each voxel repeated s_d × s_h × s_w times (keras.layers.UpSampling3D, nearest): Keras (D, H, W, C) →
/// (D·s_d, H·s_h, W·s_w, C), held (N, D, H, W, C). Errors, ONNX Resize: UpSamplingLayer.
class UpSampling3DImpl : public UpSamplingLayer {
  TORCHFIT_LAYER_CLASS(UpSampling3D);

 public:
  explicit UpSampling3DImpl(UpSampling3DOptions opts = {})
      : UpSamplingLayer(keras_class_name, opts.name(), at::IntArrayRef(*opts.size()).vec()), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
  }
  nlohmann::json config() const override { return base_config(options); }
  UpSampling3DOptions options;
};
TORCH_MODULE(UpSampling3D);

}  // namespace torchfit
