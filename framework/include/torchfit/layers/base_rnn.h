#pragma once
/// @file base_rnn.h
/// The base of the recurrent layers (SimpleRNN, LSTM, GRU), as Keras's keras/src/layers/rnn/rnn.py (the RNN
/// wrapper) and dropout_rnn_cell.py: the options they share, the sequence-shape check, the dropout masks,
/// the step loop and the return_sequences / go_backwards handling of the outputs; each layer writes its cell.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// The arguments every recurrent layer has, with Keras 3's defaults; `Derived` is the layer's options
/// struct, which the chained setters return: `LSTMOptions(8).return_sequences(true).recurrent_activation(…)`.
template <typename Derived>
struct RecurrentOptions : LayerOptions<Derived> {
  explicit RecurrentOptions(int64_t units) : units_(units) {}
  /// For the registry only (layer_args.h): leaves units unset, to be read from a config.
  explicit RecurrentOptions(FromConfig) : units_(0) {}
  /// Size of the state and of each output step (> 0).
  TORCHFIT_ARG(Derived, int64_t, units);
  /// A name from activation_names() (default tanh).
  TORCHFIT_ARG(Derived, std::string, activation) = "tanh";
  TORCHFIT_ARG(Derived, bool, use_bias) = true;
  /// Fraction of the input's features dropped in training, one mask per sequence reused at every step.
  TORCHFIT_ARG(Derived, double, dropout) = 0.0;
  /// Fraction of the state dropped in training before the recurrent kernel, one mask per sequence.
  TORCHFIT_ARG(Derived, double, recurrent_dropout) = 0.0;
  /// The whole output sequence (steps, units) rather than the last step's (units) (default false).
  TORCHFIT_ARG(Derived, bool, return_sequences) = false;
  /// Keras's extra state outputs: not supported yet (true is refused).
  TORCHFIT_ARG(Derived, bool, return_state) = false;
  /// Process the steps last to first; the output sequence is in processing order, as Keras (default false).
  TORCHFIT_ARG(Derived, bool, go_backwards) = false;
  /// Keras's state kept across batches: not supported yet (true is refused).
  TORCHFIT_ARG(Derived, bool, stateful) = false;
  /// Keras's unrolling of the loop: accepted, no effect on values.
  TORCHFIT_ARG(Derived, bool, unroll) = false;
  /// Zeros as the output of masked steps (and as the last output when the last step is masked) instead of
  /// the previous step's output, as Keras 3 (default false; Bidirectional sets it to return_sequences).
  TORCHFIT_ARG(Derived, bool, zero_output_for_mask) = false;
  /// tf.keras 2's (steps, N, C) layout: not supported (true is refused).
  TORCHFIT_ARG(Derived, bool, time_major) = false;
  /// Keras's seed of the dropout masks (read and written; torchfit draws from LibTorch's generator).
  TORCHFIT_ARG(Derived, std::optional<int64_t>, seed) = std::nullopt;

 public:
  /// The shared arguments (layer_args.h); a layer's args() calls this and lists its own.
  template <typename Args>
  void recurrent_args(Args& a) {
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

/// The shared arguments as the family's code reads them (RecurrentLayer::recurrent()).
struct RecurrentSettings {
  int64_t units = 0;
  double dropout = 0.0, recurrent_dropout = 0.0;
  bool return_sequences = false, go_backwards = false, zero_output_for_mask = false;
};

/// The recurrent family. Input Keras (steps, C), held (N, steps, C) → (units), held (N, units), or with
/// return_sequences (steps, units), held (N, steps, units). The state starts at zeros. Dropout masks
/// (training only) are drawn once per sequence on the input's device and dtype and reused at every step, as
/// Keras's DropoutRNNCell.
/// Masks (Keras's RNN with a mask, keras/src/backend/torch/rnn.py): a masked step leaves the state as it was
/// and outputs the previous step's output (zeros with zero_output_for_mask); the output carries the mask on
/// with return_sequences. A masked forward takes the step loop (LibTorch's fused kernels have no masks).
class RecurrentLayer : public Layer {
 public:
  /// The shared arguments of this layer's options.
  virtual RecurrentSettings recurrent() const = 0;
  bool supports_masking() const override { return true; }
  bool uses_mask() const override { return true; }
  /// The input's mask with return_sequences, else none (Keras's RNN.compute_mask).
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  /// forward() with the steps' mask (N, steps) of masks[0]. Errors: ConfigError naming the layer for a mask
  /// of another shape than the input's (N, steps).
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  /// 2 · steps · (kernel + recurrent kernel sizes): the input and state projections of every step.
  int64_t flops_per_sample() const override;
  /// Sets zero_output_for_mask in the layer's options (Bidirectional sets its layers' to return_sequences).
  virtual void set_zero_output_for_mask(bool zero) = 0;

  /// Keras's layout as held: kernel (C, g·units), recurrent_kernel (units, g·units), bias (g·units; GRU with
  /// reset_after (2, 3·units)), g the gates (1 SimpleRNN, 4 LSTM, 3 GRU); undefined before build (bias also
  /// without use_bias).
  at::Tensor kernel, recurrent_kernel, bias;

 protected:
  using Layer::Layer;
  /// Keras weights: kernel, recurrent_kernel, then bias when the layer has one, each in the held shape.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
  /// ConfigError naming the layer for units ≤ 0, an unknown activation, a dropout outside [0, 1), or
  /// return_state, stateful or time_major true (not supported yet).
  template <typename Options>
  void check_recurrent_options(const Options& o) const {
    check_recurrent(o.units(), o.activation(), o.dropout(), o.recurrent_dropout(), o.return_state(), o.stateful(),
                    o.time_major());
  }
  void check_recurrent(int64_t units, const std::string& activation, double dropout, double recurrent_dropout,
                       bool return_state, bool stateful, bool time_major) const;
  /// The features C of a sequence input (steps, C); ConfigError naming the layer for another rank.
  int64_t sequence_features(const Shape& input_shape) const;
  /// The output shape for `input_shape` (steps, C): (units) or (steps, units).
  Shape recurrent_output_shape(const Shape& input_shape) const;

  /// The dropout masks of one forward: (N, C) for the input, (N, units) for the state; undefined outside
  /// training or at rate 0. Kept with probability 1 − rate, scaled by 1 / (1 − rate).
  struct Masks {
    at::Tensor input, state;
  };
  Masks dropout_masks(const at::Tensor& x) const;
  /// x (N, steps, C) in processing order (flipped with go_backwards) and times the input mask.
  at::Tensor steps_input(const at::Tensor& x, const Masks& masks) const;
  /// Whether the forward now running has a steps' mask (forward_masked): the layer then takes its step loop.
  bool masked() const { return steps_mask_.defined(); }

  /// One step of the cell: the step's input projection (N, k·units) and the state (h first, then the
  /// cell's others, e.g. LSTM's carry), updated in place; returns the step's output h (N, units).
  using Step = std::function<at::Tensor(const at::Tensor& xw_t, std::vector<at::Tensor>& state)>;
  /// Runs `step` over the steps of `xw` (N, steps, k·units, in processing order) from `states` zero states
  /// (N, units); returns the last output or (return_sequences) the outputs stacked (N, steps, units). With a
  /// steps' mask, a masked step keeps every state and repeats the previous output (or gives zeros).
  at::Tensor run_steps(const at::Tensor& xw, size_t states, const Step& step) const;
  /// The output of a fused kernel's sequence `y` (N, steps, units, in processing order): `y` itself or
  /// (without return_sequences) its last step.
  at::Tensor sequence_output(const at::Tensor& y) const;

 public:
  /// One ONNX recurrent node's operator (RNN, LSTM, GRU) and one direction's weights in ONNX's layout and
  /// gate order: W (1, g·units, C), R (1, g·units, units), B (1, 2·g·units), and the node's attributes
  /// besides hidden_size (GRU's linear_before_reset). Bidirectional stacks two of them.
  struct OnnxRecurrentWeights {
    std::string op;
    at::Tensor w, r, b;
    std::vector<io::OnnxAttribute> attributes;
  };
  /// This built layer's ONNX weights (go_backwards aside: the caller picks the direction). Errors:
  /// ConfigError naming the layer for activations ONNX's default ones do not compute; the default refuses
  /// a class without an ONNX recurrent form.
  virtual OnnxRecurrentWeights onnx_weights() const;

 protected:
  /// ONNX: Transpose `input` to (steps, N, C), the recurrent node `op` (RNN, LSTM, GRU; forward) of weights
  /// W, R, B (ONNX's layout and gate order) with hidden_size and `attributes`, Squeeze of its direction axis,
  /// then Transpose back to (N, steps, units) (return_sequences) or Slice of the last step and Squeeze.
  /// Refused naming the layer with go_backwards (ONNX's reverse direction keeps the input's order).
  std::string onnx_recurrent(io::OnnxGraph& g, const std::string& input, const std::string& op, const at::Tensor& w,
                             const at::Tensor& r, const at::Tensor& b,
                             std::vector<io::OnnxAttribute> attributes = {}) const;
  /// The same with onnx_weights().
  std::string onnx_recurrent(io::OnnxGraph& g, const std::string& input) const;

 private:
  at::Tensor steps_mask_;  // (N, steps) bool in processing order, during forward_masked only
};

/// A recurrent layer with its options (see RecurrentLayer).
template <typename Options>
class RecurrentImpl : public RecurrentLayer {
 public:
  nlohmann::json config() const override { return base_config(options); }
  RecurrentSettings recurrent() const override {
    return {options.units(),
            options.dropout(),
            options.recurrent_dropout(),
            options.return_sequences(),
            options.go_backwards(),
            options.zero_output_for_mask()};
  }
  void set_zero_output_for_mask(bool zero) override { options.zero_output_for_mask(zero); }
  Options options;

 protected:
  RecurrentImpl(const char* class_name, Options opts)
      : RecurrentLayer(class_name, opts.name()), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
    check_recurrent_options(options);
  }
};

namespace detail {
/// Keras's orthogonal initializer (gain 1) of a (rows, cols) matrix, float32: Q of the QR of a normal matrix,
/// its columns' signs fixed by R's diagonal (a wide matrix: the transpose of a tall one).
at::Tensor orthogonal(int64_t rows, int64_t cols);
/// `t`'s gate blocks of `units` along `dim` in the order `blocks` (indices of Keras's blocks): LSTM's Keras
/// i, f, c, o → ONNX's i, o, f, c is {0, 3, 1, 2}; GRU's z, r, h → PyTorch's r, z, n is {1, 0, 2}.
at::Tensor reorder_gates(const at::Tensor& t, int64_t dim, int64_t units, const std::vector<int64_t>& blocks);
}  // namespace detail

}  // namespace torchfit
