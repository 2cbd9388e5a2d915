#pragma once
/// @file average_pooling2d.h
/// AveragePooling2D — 2-D average pooling as keras.layers.AveragePooling2D.
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of AveragePooling2D. Defaults as Keras: pool 2×2, strides = pool_size, padding "valid".
struct AveragePooling2DOptions {
  AveragePooling2DOptions(torch::ExpandingArray<2> pool_size = 2) : pool_size_(pool_size) {}
  /// Window (rows, cols) in pixels; an int means square. Default 2.
  TORCH_ARG(torch::ExpandingArray<2>, pool_size);
  /// Strides (rows, cols), or one value for both; unset ⇒ pool_size (Keras). The layer's own `options`
  /// hold the resolved pair, which its config writes (a list; the registry reads a list of 1 or 2 integers).
  TORCH_ARG(std::optional<std::vector<int64_t>>, strides) = std::nullopt;
  /// "valid" (default) or "same".
  TORCH_ARG(std::string, padding) = "valid";
  /// Input shape (H, W, C) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: average_pooling2d, average_pooling2d_1, …).
  TORCH_ARG(std::string, name) = "";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("pool_size", pool_size());
    a("strides", strides());
    a("padding", padding());
  }
};

/// Mean over (H, W) windows, per channel.
///
/// Input (N, C, H, W) [Keras (H, W, C)]; output (N, C, H', W') with valid: H' = floor((H − p) / s) + 1,
/// same: H' = ceil(H / s). With "same" the padding is TensorFlow's (extra pixel at the bottom/right) and
/// padded pixels are NOT counted in the mean (as tf.nn.avg_pool / Keras). No parameters.
/// Errors: ConfigError for non-positive pool/strides, unknown padding, a non-3-D input or a pool larger
/// than a "valid" input.
class AveragePooling2DImpl : public Layer {
 public:
  explicit AveragePooling2DImpl(AveragePooling2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;

  AveragePooling2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> strides_;
  std::vector<int64_t> pad_;  // (top, bottom, left, right) for "same"
  at::Tensor inv_count_;      // (1, 1, H', W') 1 / number of real pixels per window ("same" only)
};
TORCH_MODULE(AveragePooling2D);

}  // namespace torchfit
