#pragma once
/// @file noise.h
/// The regularization layers that add noise in training and pass their input through at inference, as
/// Keras's: GaussianNoise, GaussianDropout, AlphaDropout, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D. Their
/// random draws come from LibTorch's generator (at::manual_seed), as Dropout's do; Keras's `seed` is not read.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of GaussianNoise. Required: stddev.
struct GaussianNoiseOptions : LayerOptions<GaussianNoiseOptions> {
  explicit GaussianNoiseOptions(double stddev) : stddev_(stddev) {}
  /// For the registry only (layer_args.h): leaves stddev unset, to be read from a config.
  explicit GaussianNoiseOptions(FromConfig) : stddev_(0.0) {}
  /// Standard deviation of the noise (>= 0).
  TORCH_ARG(double, stddev);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("stddev", stddev());
  }
};

/// In train(): x + N(0, stddev²) per element (keras.layers.GaussianNoise); in eval(): x. Any input shape;
/// output the same. No parameters. Errors: ConfigError for a stddev that is negative or not finite.
class GaussianNoiseImpl : public Layer {
  TORCHFIT_LAYER_CLASS(GaussianNoise);

 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: none, its input passes through (inference) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit GaussianNoiseImpl(GaussianNoiseOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override { return base_config(options); }
  GaussianNoiseOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(GaussianNoise);

/// Options of GaussianDropout, AlphaDropout and SpatialDropout1D/2D/3D. Required: rate.
struct NoiseDropoutOptions : LayerOptions<NoiseDropoutOptions> {
  explicit NoiseDropoutOptions(double rate) : rate_(rate) {}
  /// For the registry only (layer_args.h): leaves rate unset, to be read from a config.
  explicit NoiseDropoutOptions(FromConfig) : rate_(0.0) {}
  /// Drop probability, in [0, 1).
  TORCH_ARG(double, rate);

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("rate", rate());
  }
};

/// What the dropout-like noise layers share: the rate check and the pass-through at inference.
class NoiseDropout : public Layer {
 public:
  /// Passes a Keras mask on unchanged (Keras 3's supports_masking).
  bool supports_masking() const override { return true; }
  /// ONNX: none, its input passes through (inference).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  nlohmann::json config() const override { return base_config(options); }
  NoiseDropoutOptions options;

 protected:
  /// Errors: ConfigError naming the layer for a rate outside [0, 1).
  NoiseDropout(const char* class_name, NoiseDropoutOptions options);
  /// Whether this forward adds its noise (train() and rate > 0).
  bool active() const { return is_training() && options.rate() > 0.0; }
};

/// In train(): x · N(1, rate / (1 − rate)) per element (keras.layers.GaussianDropout: multiplicative noise
/// of mean 1 and standard deviation sqrt(rate / (1 − rate))); in eval(): x. Any input shape. No parameters.
class GaussianDropoutImpl : public NoiseDropout {
  TORCHFIT_LAYER_CLASS(GaussianDropout);

 public:
  explicit GaussianDropoutImpl(NoiseDropoutOptions options) : NoiseDropout(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(GaussianDropout);

/// In train(): keras.layers.AlphaDropout — each element kept with probability 1 − rate, a dropped one set to
/// α' = −1.6732632423543772·1.0507009873554805 (SELU's negative saturation), then a·x + b with a = ((1 − rate)
/// (1 + rate·α'²))^−½ and b = −a·α'·rate, which keeps a SELU network's zero mean and unit variance; in eval(): x.
/// Any input shape. No parameters.
class AlphaDropoutImpl : public NoiseDropout {
  TORCHFIT_LAYER_CLASS(AlphaDropout);

 public:
  explicit AlphaDropoutImpl(NoiseDropoutOptions options) : NoiseDropout(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override { return input_shape; }
};
TORCH_MODULE(AlphaDropout);

/// In train(): drops whole channels (keras.layers.SpatialDropout1D: noise_shape (N, 1, C) for a sequence
/// Keras (steps, C), held (N, steps, C)), the kept ones scaled by 1/(1 − rate); in eval(): x. Input must be
/// 2-D per sample (steps, channels). No parameters. Errors: ConfigError for another rank (build).
class SpatialDropout1DImpl : public NoiseDropout {
  TORCHFIT_LAYER_CLASS(SpatialDropout1D);

 public:
  explicit SpatialDropout1DImpl(NoiseDropoutOptions options) : NoiseDropout(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(SpatialDropout1D);

/// In train(): drops whole feature maps (keras.layers.SpatialDropout2D, channels_last: noise_shape
/// (N, 1, 1, C) for Keras (H, W, C), held (N, C, H, W)), the kept ones scaled by 1/(1 − rate); in eval(): x.
/// Input must be an image (H, W, C). No parameters. Errors: ConfigError for another rank (build).
class SpatialDropout2DImpl : public NoiseDropout {
  TORCHFIT_LAYER_CLASS(SpatialDropout2D);

 public:
  explicit SpatialDropout2DImpl(NoiseDropoutOptions options) : NoiseDropout(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(SpatialDropout2D);

/// In train(): drops whole channels of a volume (keras.layers.SpatialDropout3D, channels_last: noise_shape
/// (N, 1, 1, 1, C) for Keras (D, H, W, C), held (N, D, H, W, C)), the kept ones scaled by 1/(1 − rate); in
/// eval(): x. Input must be a volume (D, H, W, C). No parameters. Errors: ConfigError for another rank (build).
class SpatialDropout3DImpl : public NoiseDropout {
  TORCHFIT_LAYER_CLASS(SpatialDropout3D);

 public:
  explicit SpatialDropout3DImpl(NoiseDropoutOptions options) : NoiseDropout(keras_class_name, std::move(options)) {}
  at::Tensor forward(const at::Tensor& x) override;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(SpatialDropout3D);

}  // namespace torchfit
