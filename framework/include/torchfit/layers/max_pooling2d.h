#pragma once
/// @file max_pooling2d.h
/// MaxPooling2D — 2-D max pooling as keras.layers.MaxPooling2D.
#include <torch/arg.h>
#include <torch/expanding_array.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of MaxPooling2D. Defaults as Keras: pool 2×2, strides = pool_size, padding "valid".
struct MaxPooling2DOptions {
  MaxPooling2DOptions(torch::ExpandingArray<2> pool_size = 2) : pool_size_(pool_size) {}
  /// Window (rows, cols) in pixels.
  TORCH_ARG(torch::ExpandingArray<2>, pool_size);
  /// Strides (rows, cols), or one value for both; unset ⇒ pool_size (Keras). The layer's own `options`
  /// hold the resolved pair, which its config writes (a list; the registry reads a list of 1 or 2 integers).
  TORCH_ARG(std::optional<std::vector<int64_t>>, strides) = std::nullopt;
  /// "valid" (default) or "same".
  TORCH_ARG(std::string, padding) = "valid";
  /// Input shape (H, W, C) when this is the first layer.
  TORCH_ARG(std::optional<Shape>, input_shape) = std::nullopt;
  /// Layer name ("" ⇒ automatic: max_pooling2d, max_pooling2d_1, …).
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

/// Max pooling over (H, W) windows.
///
/// Input (N, C, H, W) [Keras (H, W, C)]; output (N, C, H', W') with valid: H' = floor((H − p) / s) + 1,
/// same: H' = ceil(H / s). No parameters. Errors: ConfigError for a pool larger than the input, a
/// non-3-D input or an unknown padding.
class MaxPooling2DImpl : public Layer {
 public:
  explicit MaxPooling2DImpl(MaxPooling2DOptions options = {});
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;

  MaxPooling2DOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> strides_;
  std::vector<int64_t> pad_;  // (top, bottom, left, right) for "same"
};
TORCH_MODULE(MaxPooling2D);

}  // namespace torchfit
