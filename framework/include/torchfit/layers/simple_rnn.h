#pragma once
/// @file simple_rnn.h
/// SimpleRNN — a fully connected recurrent layer, as keras.layers.SimpleRNN (keras/src/layers/rnn/simple_rnn.py).
#include <optional>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of SimpleRNN. Required: units. Defaults as Keras 3.
struct SimpleRNNOptions : LayerOptions<SimpleRNNOptions> {
  explicit SimpleRNNOptions(int64_t units) : units_(units) {}
  /// For the registry only (layer_args.h): leaves units unset, to be read from a config.
  explicit SimpleRNNOptions(FromConfig) : units_(0) {}
  /// Size of the state and of each output step (> 0).
  TORCH_ARG(int64_t, units);
  /// A name from activation_names() (default tanh).
  TORCH_ARG(std::string, activation) = "tanh";
  TORCH_ARG(bool, use_bias) = true;
  /// Fraction of the input's features dropped in training, one mask per sequence reused at every step.
  TORCH_ARG(double, dropout) = 0.0;
  /// Fraction of the state dropped in training before the recurrent kernel, one mask per sequence.
  TORCH_ARG(double, recurrent_dropout) = 0.0;
  /// The whole output sequence (steps, units) rather than the last step's (units) (default false).
  TORCH_ARG(bool, return_sequences) = false;
  /// Keras's extra state outputs: not supported yet (true is refused).
  TORCH_ARG(bool, return_state) = false;
  /// Process the steps last to first; the output sequence is in processing order, as Keras (default false).
  TORCH_ARG(bool, go_backwards) = false;
  /// Keras's state kept across batches: not supported yet (true is refused).
  TORCH_ARG(bool, stateful) = false;
  /// Keras's unrolling of the loop: accepted, no effect on values.
  TORCH_ARG(bool, unroll) = false;
  /// Keras 3's zeroed outputs at masked steps: accepted (torchfit has no masks), no effect.
  TORCH_ARG(bool, zero_output_for_mask) = false;
  /// tf.keras 2's (steps, N, C) layout: not supported (true is refused).
  TORCH_ARG(bool, time_major) = false;
  /// Keras's seed of the dropout masks (read and written; torchfit draws from LibTorch's generator).
  TORCH_ARG(std::optional<int64_t>, seed) = std::nullopt;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("units", units());
    a("activation", activation());
    a("use_bias", use_bias());
    a("dropout", dropout());
    a("recurrent_dropout", recurrent_dropout());
    a("return_sequences", return_sequences());
    a("return_state", return_state());
    a("go_backwards", go_backwards());
    a("stateful", stateful());
    a("unroll", unroll());
    a("zero_output_for_mask", zero_output_for_mask());
    a("time_major", time_major());
    a("seed", seed());
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
class SimpleRNNImpl : public Layer {
  TORCHFIT_LAYER_CLASS(SimpleRNN);

 public:
  explicit SimpleRNNImpl(SimpleRNNOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  /// ONNX: Transpose to (steps, N, C), RNN (Tanh, forward), the last step Gathered or the sequence
  /// Transposed back. Refused naming the layer for another activation or go_backwards.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

  SimpleRNNOptions options;
  /// (C, units), (units, units), (units); undefined before build (bias also without use_bias).
  at::Tensor kernel, recurrent_kernel, bias;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  /// Keras weights: kernel (C, units), recurrent_kernel (units, units), bias (units), as held.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(SimpleRNN);

}  // namespace torchfit
