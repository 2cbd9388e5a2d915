#pragma once
/// @file conv1d.h
/// Conv1D — 1-D convolution over the steps of a sequence, as keras.layers.Conv1D (channels_last).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_conv.h>

namespace torchfit {

/// Options of Conv1D. Required: filters, kernel_size (steps); the window arguments (strides, padding —
/// "valid", "same" or "causal" —, dilation_rate, activation, use_bias) and their Keras defaults are
/// ConvOptions's (base_conv.h).
struct Conv1DOptions : ConvFiltersOptions<Conv1DOptions, 1> {
  using ConvFiltersOptions::ConvFiltersOptions;
};

/// y = activation(conv1d(x) + b) over a sequence: Keras (steps, C_in) → (steps', filters), held in Keras's
/// order (N, steps, C) — the layer moves the channels first for LibTorch's conv1d and back. steps' =
/// ceil(steps / s) for "same" (TensorFlow's padding, the extra step at the end); for "causal" (k − 1)·d
/// zeros go before the sequence (output t sees inputs ≤ t), steps' = ceil(steps / s); "valid":
/// floor((steps − (k − 1)·d − 1) / s) + 1. Parameters k·C_in·filters + filters: `kernel` (filters, C_in, k)
/// [Keras (k, C_in, filters)], glorot_uniform (fan_in k·C_in, fan_out k·filters), `bias` zeros (Keras
/// defaults). Errors: ConfigError for filters, kernel_size, strides or dilation_rate ≤ 0, another padding,
/// an unknown activation (construction); an input that is not a sequence (steps, C) or shorter than a
/// "valid" window (build).
class Conv1DImpl : public ConvNDImpl<Conv1DOptions, 1> {
  TORCHFIT_LAYER_CLASS(Conv1D);

 public:
  /// ONNX: Transpose to (N, C, steps), Reshape to (N, C, 1, steps), a 2-D Conv (1 × k, explicit pads),
  /// Reshape back to (N, filters, steps'), Transpose back (+ activation) (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  explicit Conv1DImpl(Conv1DOptions options);
};
TORCH_MODULE(Conv1D);

}  // namespace torchfit
