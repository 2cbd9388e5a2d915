#pragma once
/// @file time_distributed.h
/// TimeDistributed — one layer applied to every time step of a sequence, as keras.layers.TimeDistributed
/// (keras/src/layers/rnn/time_distributed.py).
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of TimeDistributed. Required: layer.
struct TimeDistributedOptions : LayerOptions<TimeDistributedOptions> {
  /// `layer`: the layer applied to each step (Dense, Conv2D, a pooling layer, Flatten, …), as
  /// `Dense(DenseOptions(8)).ptr()`. The instance itself is used (its weights are this layer's), as Keras.
  explicit TimeDistributedOptions(std::shared_ptr<Layer> layer) : layer_(std::move(layer)) {}
  /// The same from a layer holder: `TimeDistributedOptions(Dense(DenseOptions(8)))`.
  template <typename Impl>
  explicit TimeDistributedOptions(const torch::nn::ModuleHolder<Impl>& layer) : layer_(layer.ptr()) {}
  TORCHFIT_ARG(TimeDistributedOptions, std::shared_ptr<Layer>, layer);

 public:
};

/// Applies a layer to every time step, as keras.layers.TimeDistributed: the batch and time axes are folded
/// into one, (N, T, …) → (N·T, …), the layer runs once on all steps, and the result is unfolded.
///
/// Input Keras (T, d1, …) (at least (T, d1)) → (T, e1, …) where (e1, …) is the layer's output for (d1, …):
/// Dense on (T, D) → (T, units); Conv2D on (T, H, W, C) → (T, H', W', filters); Flatten on (T, H, W, C) →
/// (T, H·W·C). Held in Keras's order (N, T, …) except a Keras 3-axis shape, held channels first as every
/// (H, W, C) is: (T, S, C) is (N, C, T, S). The layer gets its steps as torchfit holds its own input shape (an
/// image step (H, W, C) as (N·T, C, H, W)). Parameters: the layer's. Keras weights, names and initializers:
/// the layer's ("time_distributed/kernel" in TensorFlow.js). Config: "layer" as Keras writes it
/// ({"class_name", "config"}).
/// Errors: ConfigError naming the layer for no layer, a multi-input layer, a layer with an activity
/// regularizer (put it on the TimeDistributed), and (at build) an input of fewer than two axes (Keras's
/// "at least 3 dimensions" with the batch) or one the layer refuses.
class TimeDistributedImpl : public Layer {
  TORCHFIT_LAYER_CLASS(TimeDistributed);

 public:
  explicit TimeDistributedImpl(TimeDistributedOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  /// The steps' mask passes on (Keras 3.15's TimeDistributed); the wrapped layer gets none.
  bool supports_masking() const override { return true; }
  nlohmann::json config() const override;
  /// ONNX: (Transpose to Keras's order,) Reshape (N, T, …) → (N·T, …), (Transpose to the layer's held
  /// order,) the layer's own nodes, then the same back, the steps T held (onnx_holds_built_size). No
  /// export when the layer has none.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  bool onnx_holds_built_size() const override { return true; }
  std::vector<std::string> keras_weight_names() const override { return layer->keras_weight_names(); }
  std::string no_keras_weights_reason() const override { return layer->no_keras_weights_reason(); }
  int64_t flops_per_sample() const override;

  TimeDistributedOptions options;
  /// The wrapped layer (child "layer", Keras's attribute name).
  std::shared_ptr<Layer> layer;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(TimeDistributed);

}  // namespace torchfit
