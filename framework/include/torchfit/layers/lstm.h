#pragma once
/// @file lstm.h
/// LSTM — long short-term memory, as keras.layers.LSTM (keras/src/layers/rnn/lstm.py, LSTMCell).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_rnn.h>

namespace torchfit {

/// Options of LSTM. Required: units. Defaults as Keras 3 (the shared ones in base_rnn.h).
struct LSTMOptions : RecurrentOptions<LSTMOptions> {
  using RecurrentOptions::RecurrentOptions;
  /// The gates' activation, a name from activation_names() (default sigmoid).
  TORCH_ARG(std::string, recurrent_activation) = "sigmoid";
  /// The forget gate's bias initialised to ones, the other gates' to zeros (default true, as Keras).
  TORCH_ARG(bool, unit_forget_bias) = true;
  /// Keras's implementation 1 or 2 (tf.keras 2 writes it): accepted, no effect on values.
  TORCH_ARG(int64_t, implementation) = 2;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    recurrent_args(a);
    a("recurrent_activation", recurrent_activation());
    a("unit_forget_bias", unit_forget_bias());
    a("implementation", implementation());
  }
};

/// Long short-term memory, as keras.layers.LSTM (Hochreiter 1997). Per step, with z = x_t·kernel + bias +
/// h_{t−1}·recurrent_kernel split in four (i, f, c, o, Keras's gate order): i = σ(z_i), f = σ(z_f),
/// o = σ(z_o) (σ = recurrent_activation), c_t = f·c_{t−1} + i·activation(z_c), h_t = o·activation(c_t);
/// h_0 = c_0 = 0.
///
/// Input Keras (steps, C), held (N, steps, C) → (units), held (N, units), or with return_sequences
/// (steps, units), held (N, steps, units). Parameters, held in Keras's layout: kernel (C, 4·units),
/// glorot_uniform; recurrent_kernel (units, 4·units), orthogonal; bias (4·units), zeros with the forget gate's
/// ones (unit_forget_bias). Two paths, the same values: with activation tanh, recurrent_activation sigmoid and
/// no recurrent dropout mask (recurrent_dropout 0, or inference), LibTorch's fused at::lstm runs (PyTorch's
/// gate order i, f, g, o is Keras's: w_ih = kernelᵀ, w_hh = recurrent_kernelᵀ, b_ih = bias, b_hh = 0; cuDNN on
/// CUDA); otherwise a step loop of LibTorch ops. Dropout (training only): one input mask and one state mask per
/// sequence, reused at every step and for the four gates (Keras 3's implementation 2; Keras's implementation 1,
/// which it picks with recurrent_dropout, draws one per gate — the same distribution per gate).
/// Errors: ConfigError naming the layer for units ≤ 0, an unknown activation or recurrent_activation, a dropout
/// outside [0, 1), return_state, stateful or time_major true (not supported yet), an implementation other than
/// 1 or 2, an input that is not a sequence (steps, C), Keras weights of other shapes.
class LSTMImpl : public RecurrentImpl<LSTMOptions> {
  TORCHFIT_LAYER_CLASS(LSTM);

 public:
  explicit LSTMImpl(LSTMOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  /// ONNX: Transpose to (steps, N, C), LSTM (forward; W, R in ONNX's gate order i, o, f, c, B = [bias, 0]),
  /// the sequence Transposed back or the last step Sliced. Refused naming the layer for activations other than
  /// tanh / sigmoid, or go_backwards.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// ONNX's weights of one direction (base_rnn.h), for export_onnx and Bidirectional.
  OnnxRecurrentWeights onnx_weights() const override;
  /// Whether forward runs at::lstm (default activations) rather than the step loop, given whether a
  /// recurrent dropout mask is drawn.
  bool fused(bool recurrent_mask) const;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  /// With unit_forget_bias, a bias_initializer draws the input, cell and output gates' quarters and the
  /// forget gate's quarter is ones (Keras's LSTMCell.build).
  at::Tensor initial_value(const std::string& weight, const Initializer& init,
                           at::IntArrayRef keras_shape) const override;

 private:
  at::Tensor fused_forward(const at::Tensor& x) const;
  at::Tensor loop_forward(const at::Tensor& x, const Masks& masks) const;
};
TORCH_MODULE(LSTM);

}  // namespace torchfit
