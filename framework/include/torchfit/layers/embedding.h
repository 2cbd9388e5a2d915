#pragma once
/// @file embedding.h
/// Embedding — a lookup table of vectors indexed by integers, as keras.layers.Embedding.
#include <optional>

#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Embedding. Required: input_dim, output_dim. Defaults as Keras 3.
struct EmbeddingOptions : LayerOptions<EmbeddingOptions> {
  EmbeddingOptions(int64_t input_dim, int64_t output_dim) : input_dim_(input_dim), output_dim_(output_dim) {}
  /// For the registry only (layer_args.h): leaves the sizes unset, to be read from a config.
  explicit EmbeddingOptions(FromConfig) : input_dim_(0), output_dim_(0) {}
  /// Size of the vocabulary (> 0): indices lie in [0, input_dim).
  TORCH_ARG(int64_t, input_dim);
  /// Size of each vector (> 0).
  TORCH_ARG(int64_t, output_dim);
  /// Keras's index 0 as padding: the output carries the mask `indices != 0` (N, L) to the layers after it
  /// (Layer::compute_mask), so index 0 cannot be a word (default false).
  TORCH_ARG(bool, mask_zero) = false;
  /// tf.keras 2's length of the index sequences (default none); when given it must be the input's first axis.
  TORCH_ARG(std::optional<int64_t>, input_length) = std::nullopt;

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("input_dim", input_dim());
    a.required("output_dim", output_dim());
    a("mask_zero", mask_zero());
    a("input_length", input_length());
  }
};

/// Looks up a vector per index, as keras.layers.Embedding: y[..., :] = embeddings[x[...], :].
///
/// Input Keras (d1, …) of integer indices, held as a float or integer tensor (a float is truncated toward
/// zero, as Keras's ops.cast to int32) → output (d1, …, output_dim). Tensors: a sequence (L) held (N, L) →
/// (N, L, output_dim); an (H, W) input held (N, H, W) → Keras (H, W, output_dim), an image, held
/// (N, output_dim, H, W); an image (H, W, C) held (N, C, H, W) → (N, H, W, C, output_dim) (Keras order).
/// Parameters input_dim·output_dim; `embeddings` (input_dim, output_dim), U(−0.05, 0.05) (Keras's
/// "uniform"); the same layout in Keras. The gradient reaches the embeddings, not the input.
/// mask_zero: the output's Keras mask is `indices != 0` in the input's Keras shape (Keras's compute_mask); the
/// ONNX export refuses a model where it reaches a layer that computes with it (Model::masked_consumers).
/// Errors: ConfigError for input_dim or output_dim ≤ 0, an input_length other than the input's first axis; IndexError
/// naming the layer and the value for an index < 0 or ≥ input_dim.
class EmbeddingImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Embedding);

 public:
  explicit EmbeddingImpl(EmbeddingOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  bool supports_masking() const override { return true; }
  bool makes_mask() const override { return options.mask_zero(); }
  /// With mask_zero: indices != 0, in the input's Keras order (N, L) / (N, H, W); else none.
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  nlohmann::json config() const override;
  /// ONNX: Cast to int64, Gather (axis 0) of the table, and the moves of an image in or out.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;

  EmbeddingOptions options;
  /// The table (input_dim, output_dim); undefined before build.
  at::Tensor embeddings;

 protected:
  Shape build_impl(const Shape& input_shape) override;
  /// Keras weights: embeddings (input_dim, output_dim), as held.
  void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) override;
  std::vector<at::Tensor> keras_weights_impl() const override;
};
TORCH_MODULE(Embedding);

}  // namespace torchfit
