#pragma once
/// @file conv1d.h
/// Conv1D — 1-D convolution over the steps of a sequence, as keras.layers.Conv1D (channels_last).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Conv1D. Required: filters, kernel_size. Defaults as Keras.
struct Conv1DOptions : LayerOptions<Conv1DOptions> {
  Conv1DOptions(int64_t filters, torch::ExpandingArray<1> kernel_size) : filters_(filters), kernel_size_(kernel_size) {}
  /// For the registry only (layer_args.h): leaves filters and kernel_size unset, to be read from a config.
  explicit Conv1DOptions(FromConfig) : filters_(0), kernel_size_(0) {}
  /// Output channels (> 0).
  TORCH_ARG(int64_t, filters);
  /// Window length in steps (> 0).
  TORCH_ARG(torch::ExpandingArray<1>, kernel_size);
  /// Step of the window (> 0). Default 1.
  TORCH_ARG(torch::ExpandingArray<1>, strides) = 1;
  /// "valid" (default), "same" (output ceil(steps / stride), TensorFlow's padding: the extra step at the
  /// end) or "causal" ((kernel − 1)·dilation steps of zeros before the sequence: output t sees inputs ≤ t).
  TORCH_ARG(std::string, padding) = "valid";
  /// Dilation rate (> 0). Default 1.
  TORCH_ARG(torch::ExpandingArray<1>, dilation_rate) = 1;
  /// A name from activation_names() (default linear).
  TORCH_ARG(std::string, activation) = "linear";
  /// Add a bias per filter (default true; zero-initialised).
  TORCH_ARG(bool, use_bias) = true;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("filters", filters());
    a.required("kernel_size", kernel_size());
    a("strides", strides());
    a("padding", padding());
    a("dilation_rate", dilation_rate());
    a("activation", activation());
    a("use_bias", use_bias());
  }
};

/// y = activation(conv1d(x) + b) over a sequence: Keras (steps, C_in) → (steps', filters), held in Keras's
/// order (N, steps, C) — the layer moves the channels first for LibTorch's conv1d and back. steps' =
/// ceil(steps / s) for "same"; floor((steps + p − (k − 1)·d − 1) / s) + 1 with p = (k − 1)·d for "causal"
/// and p = 0 for "valid". Parameters k·C_in·filters + filters; kernel glorot_uniform
/// (fan_in k·C_in, fan_out k·filters), bias zeros (Keras defaults).
/// Errors: ConfigError for filters, kernel_size, strides or dilation_rate ≤ 0, another padding, an unknown
/// activation (construction); an input that is not a sequence (steps, C) or shorter than a "valid" window (build).
class Conv1DImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Conv1D);

 public:
  /// ONNX: Transpose to (N, C, steps), Reshape to (N, C, 1, steps), a 2-D Conv (1 × k, explicit pads),
  /// Reshape back to (N, filters, steps'), Transpose back (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv1DImpl(Conv1DOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_without_activation(const at::Tensor& x) override;
  std::string output_activation() const override { return options.activation(); }
  nlohmann::json config() const override { return base_config(options); }
  int64_t flops_per_sample() const override;
  Conv1DOptions options;
  /// Kernel (filters, C_in, k) and bias (filters); undefined before build.
  at::Tensor kernel, bias;

 protected:
  /// Keras weights: kernel (k, C_in, filters), bias (filters).
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  Shape build_impl(const Shape& input_shape) override;

 private:
  int64_t pad_before_ = 0, pad_after_ = 0;  // zeros before / after the steps
};
TORCH_MODULE(Conv1D);

}  // namespace torchfit
