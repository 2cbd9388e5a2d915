#pragma once
/// @file gru.h
/// GRU — gated recurrent unit, as keras.layers.GRU (keras/src/layers/rnn/gru.py, GRUCell).
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_rnn.h>

namespace torchfit {

/// Options of GRU. Required: units. Defaults as Keras 3 (the shared ones in base_rnn.h).
struct GRUOptions : RecurrentOptions<GRUOptions> {
  using RecurrentOptions::RecurrentOptions;
  /// The gates' activation, a name from activation_names() (default sigmoid).
  TORCH_ARG(std::string, recurrent_activation) = "sigmoid";
  /// The reset gate applied after the recurrent kernel, with separate input and recurrent biases (default
  /// true, cuDNN's convention); false: before it, one bias.
  TORCH_ARG(bool, reset_after) = true;
  /// Keras's implementation 1 or 2 (tf.keras 2 writes it): accepted, no effect on values.
  TORCH_ARG(int64_t, implementation) = 2;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    recurrent_args(a);
    a("recurrent_activation", recurrent_activation());
    a("reset_after", reset_after());
    a("implementation", implementation());
  }
};

/// Gated recurrent unit, as keras.layers.GRU (Cho et al. 2014). Per step, with the kernels and biases split
/// in three (z, r, h, Keras's gate order), x_· = x_t·kernel_· + b_in_·:
/// reset_after true: z = σ(x_z + h_{t−1}·U_z + b_rec_z), r = σ(x_r + h_{t−1}·U_r + b_rec_r),
///   hh = activation(x_h + r·(h_{t−1}·U_h + b_rec_h));
/// reset_after false: z, r without b_rec, hh = activation(x_h + (r·h_{t−1})·U_h);
/// h_t = z·h_{t−1} + (1 − z)·hh (σ = recurrent_activation), h_0 = 0.
///
/// Input Keras (steps, C), held (N, steps, C) → (units), held (N, units), or with return_sequences
/// (steps, units), held (N, steps, units). Parameters, held in Keras's layout: kernel (C, 3·units),
/// glorot_uniform; recurrent_kernel (units, 3·units), orthogonal; bias zeros, (2, 3·units) (row 0 the input
/// bias, row 1 the recurrent one) with reset_after, else (3·units). Two paths, the same values: with
/// reset_after, activation tanh, recurrent_activation sigmoid and no recurrent dropout mask (recurrent_dropout
/// 0, or inference), LibTorch's fused at::gru runs (PyTorch's gate order r, z, n: the blocks reordered;
/// cuDNN on CUDA); otherwise a step loop of LibTorch ops. Dropout (training only): one input mask and one
/// state mask per sequence, reused at every step and for the three gates (Keras 3's implementation 2; its
/// implementation 1, picked with recurrent_dropout, draws one per gate); h_{t−1} of the last mix is undropped.
/// Errors: ConfigError naming the layer for units ≤ 0, an unknown activation or recurrent_activation, a dropout
/// outside [0, 1), return_state, stateful or time_major true (not supported yet), an implementation other than
/// 1 or 2, an input that is not a sequence (steps, C), Keras weights of other shapes.
class GRUImpl : public RecurrentImpl<GRUOptions> {
  TORCHFIT_LAYER_CLASS(GRU);

 public:
  explicit GRUImpl(GRUOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  /// ONNX: Transpose to (steps, N, C), GRU (forward; W, R in ONNX's gate order z, r, h, as Keras's;
  /// linear_before_reset 1 for reset_after, 0 without; B = [input bias, recurrent bias or 0]), the sequence
  /// Transposed back or the last step Sliced. Refused naming the layer for activations other than tanh /
  /// sigmoid, or go_backwards.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// ONNX's weights of one direction (base_rnn.h), for export_onnx and Bidirectional.
  OnnxRecurrentWeights onnx_weights() const override;
  /// Whether forward runs at::gru (reset_after, default activations) rather than the step loop, given
  /// whether a recurrent dropout mask is drawn.
  bool fused(bool recurrent_mask) const;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  at::Tensor fused_forward(const at::Tensor& x) const;
  at::Tensor loop_forward(const at::Tensor& x, const Masks& masks) const;
  /// The input and recurrent biases (3·units) (the recurrent one zeros without reset_after or bias).
  std::pair<at::Tensor, at::Tensor> biases() const;
};
TORCH_MODULE(GRU);

}  // namespace torchfit
