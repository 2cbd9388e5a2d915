#pragma once
/// @file simple_rnn.h
/// SimpleRNN — a fully connected recurrent layer, as keras.layers.SimpleRNN (keras/src/layers/rnn/simple_rnn.py).
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_rnn.h>

namespace torchfit {

/// Options of SimpleRNN. Required: units. Defaults as Keras 3 (the shared ones in base_rnn.h).
struct SimpleRNNOptions : RecurrentOptions<SimpleRNNOptions> {
  using RecurrentOptions::RecurrentOptions;
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    recurrent_args(a);
  }
};

/// A fully connected recurrent layer, as keras.layers.SimpleRNN: h_t = activation(x_t·kernel + bias +
/// h_{t−1}·recurrent_kernel), h_0 = 0.
///
/// Input Keras (steps, C), held (N, steps, C) → (units), held (N, units), or with return_sequences
/// (steps, units), held (N, steps, units). Parameters, held in Keras's layout: kernel (C, units),
/// glorot_uniform; recurrent_kernel (units, units), orthogonal; bias (units), zeros. Runs a step loop of
/// LibTorch ops (any activation; gradients reach the input and the weights). Dropout masks (training only)
/// are drawn once per sequence and reused at every step, as Keras's DropoutRNNCell.
/// Errors: ConfigError naming the layer for units ≤ 0, an unknown activation, a dropout outside [0, 1),
/// return_state, stateful or time_major true (not supported yet), an input that is not a sequence (steps, C).
class SimpleRNNImpl : public RecurrentImpl<SimpleRNNOptions> {
  TORCHFIT_LAYER_CLASS(SimpleRNN);

 public:
  explicit SimpleRNNImpl(SimpleRNNOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  /// ONNX: Transpose to (steps, N, C), RNN (Tanh, forward), the last step Gathered or the sequence
  /// Transposed back. Refused naming the layer for another activation or go_backwards.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// ONNX's weights of one direction (base_rnn.h), for export_onnx and Bidirectional.
  OnnxRecurrentWeights onnx_weights() const override;

 protected:
  Shape build_impl(const Shape& input_shape) override;
};
TORCH_MODULE(SimpleRNN);

}  // namespace torchfit
