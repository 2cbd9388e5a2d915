#pragma once
/// @file bidirectional.h
/// Bidirectional — a recurrent layer run forwards and backwards over the sequence, the two outputs merged, as
/// keras.layers.Bidirectional (keras/src/layers/rnn/bidirectional.py).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/base_rnn.h>

namespace torchfit {

/// Options of Bidirectional. Required: layer. Defaults as Keras 3.
struct BidirectionalOptions : LayerOptions<BidirectionalOptions> {
  /// `layer`: a recurrent layer (SimpleRNN, LSTM, GRU), as `LSTM(LSTMOptions(8)).ptr()`.
  explicit BidirectionalOptions(std::shared_ptr<Layer> layer) : layer_(std::move(layer)) {}
  /// The same from a layer holder: `BidirectionalOptions(LSTM(LSTMOptions(8)))`.
  template <typename Impl>
  explicit BidirectionalOptions(const torch::nn::ModuleHolder<Impl>& layer) : layer_(layer.ptr()) {}
  /// The recurrent layer whose config makes the forward layer (a fresh copy named forward_<its name>; the
  /// instance itself is not used, as Keras).
  TORCHFIT_ARG(BidirectionalOptions, std::shared_ptr<Layer>, layer);
  /// How the two outputs combine: "concat" (default; the last axis doubles), "sum", "mul", "ave". Keras's
  /// None (two outputs) is refused: torchfit's layers have one output.
  TORCHFIT_ARG(BidirectionalOptions, std::optional<std::string>, merge_mode) = std::string("concat");
  /// The layer of the backward pass (its config copied as given); default: the layer's config with
  /// go_backwards flipped, named backward_<its name>.
  TORCHFIT_ARG(BidirectionalOptions, std::shared_ptr<Layer>, backward_layer) = nullptr;
  /// Keras's `weights`: set after build, the first half into the forward layer, the rest into the backward
  /// one, each in its Keras layout (empty: drawn by the layers' initializers).
  TORCHFIT_ARG(BidirectionalOptions, std::vector<at::Tensor>, weights) = {};

 public:
};

/// Runs a forward and a backward recurrent layer over the same sequence and merges their outputs, as
/// keras.layers.Bidirectional: y = forward(x), y_rev = backward(x) (a layer with go_backwards, whose sequence
/// comes out in processing order, so with return_sequences it is flipped back in time), then concat
/// [y, y_rev] on the last axis, y + y_rev, y · y_rev or (y + y_rev) / 2.
///
/// Input Keras (steps, C), held (N, steps, C) → (units·k), held (N, units·k), or with return_sequences
/// (steps, units·k), held (N, steps, units·k); k = 2 for concat, else 1. Parameters: both layers' (twice the
/// wrapped layer's). Keras weights: the forward layer's, then the backward layer's, each in its own layout,
/// named "forward_<name>/kernel", … (keras_weight_names(), TensorFlow.js's names under the layer's). Config:
/// "merge_mode", "layer" and "backward_layer" as Keras 3 writes them ({"class_name", "config"} of the forward
/// and backward layers). The backward layer is the forward layer's config with go_backwards flipped (tf.keras
/// 2 and TensorFlow.js; Keras 3 sets it true, refusing a forward layer that already has it).
/// Errors: ConfigError naming the layer for a layer (or backward layer) that is not SimpleRNN, LSTM or GRU
/// (or a user RecurrentLayer), merge_mode None or another word, forward and backward layers with the same
/// go_backwards or different return_sequences (Keras's _verify_layer_config), a wrapped layer with an
/// activity regularizer (put it on the Bidirectional), `weights` that do not fit, and (at build) an input
/// that is not a sequence.
class BidirectionalImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Bidirectional);

 public:
  explicit BidirectionalImpl(BidirectionalOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  /// Both layers over the sequence with its steps' mask (Keras's Bidirectional passes it to each); their
  /// masked steps are zeros with return_sequences (Keras sets zero_output_for_mask on both to it).
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;
  bool supports_masking() const override { return true; }
  bool uses_mask() const override { return true; }
  /// Both layers' (RecurrentLayer::flops_per_sample).
  int64_t flops_per_sample() const override {
    return forward_layer->flops_per_sample() + backward_layer->flops_per_sample();
  }
  /// The input's mask with return_sequences, else none (Keras 3.15's compute_mask).
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  nlohmann::json config() const override;
  /// ONNX: one RNN / LSTM / GRU node with direction "bidirectional" (the two layers' weights stacked) between
  /// Transposes to and from (steps, N, C), each direction's output sliced out (its last step without
  /// return_sequences: the forward one's last, the backward one's first in time), then Concat / Add / Mul
  /// (ave: Add, Mul by 0.5). Refused naming the layer when the backward layer is not the forward layer's
  /// mirror (the same config but name and go_backwards), the forward layer goes backwards, or the wrapped
  /// layer's own export refuses its activations.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// "forward_<name>/<weight>" for the forward layer's Keras weights, then "backward_<name>/<weight>".
  std::vector<std::string> keras_weight_names() const override;

  BidirectionalOptions options;
  /// The two recurrent layers (children "forward_layer" and "backward_layer", Keras 3's attribute names).
  std::shared_ptr<RecurrentLayer> forward_layer, backward_layer;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;

 private:
  at::Tensor merge(const at::Tensor& y, const at::Tensor& y_rev) const;
};
TORCH_MODULE(Bidirectional);

}  // namespace torchfit
