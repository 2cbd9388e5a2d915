#pragma once
/// @file base_pooling.h
/// The base of the 2-D window pooling layers (MaxPooling2D, AveragePooling2D), as Keras's
/// keras/src/layers/pooling/base_pooling.py: one options struct, the strides, the padding and the
/// output shape; each layer adds only its forward.
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/expanding_array.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of a 2-D pooling layer. Defaults as Keras: pool 2×2, strides = pool_size, padding "valid".
struct Pooling2DOptions : LayerOptions<Pooling2DOptions> {
  Pooling2DOptions(torch::ExpandingArray<2> pool_size = 2) : pool_size_(pool_size) {}
  /// Window (rows, cols) in pixels; an int means square. Default 2.
  TORCH_ARG(torch::ExpandingArray<2>, pool_size);
  /// Strides (rows, cols), or one value for both; unset ⇒ pool_size (Keras). The layer's own `options`
  /// hold the resolved pair, which its config writes (a list; the registry reads a list of 1 or 2 integers).
  TORCH_ARG(std::optional<std::vector<int64_t>>, strides) = std::nullopt;
  /// "valid" (default) or "same" (TensorFlow's padding: the extra pixel at the bottom/right).
  TORCH_ARG(std::string, padding) = "valid";

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a("pool_size", pool_size());
    a("strides", strides());
    a("padding", padding());
  }
};

/// A 2-D pooling layer over (H, W) windows, per channel.
///
/// Input (N, C, H, W) [Keras (H, W, C)]; output (N, C, H', W') with valid: H' = floor((H − p) / s) + 1,
/// same: H' = ceil(H / s). No parameters. Errors: ConfigError for non-positive pool/strides, strides
/// that are not one value or a pair, an unknown padding (at construction), a non-3-D input or a pool
/// larger than a "valid" input (at build).
class Pooling2DImpl : public Layer {
 public:
  nlohmann::json config() const override;
  /// The padding "same" adds, (top, bottom, left, right) from build (zeros for "valid"; empty before build).
  const std::vector<int64_t>& padding_edges() const { return pad_; }

  Pooling2DOptions options;

 protected:
  /// `class_name` is the layer's Keras class name (its TORCHFIT_LAYER_CLASS).
  Pooling2DImpl(const char* class_name, Pooling2DOptions options);
  Shape build_impl(const Shape& input_shape) override;
  /// Whether "same" pads the input at all (it does not when the windows fit exactly).
  bool padded() const;
  /// `x` padded with `value` for "same" (TensorFlow's rule; (top, bottom, left, right) from build).
  at::Tensor pad(const at::Tensor& x, double value) const;
  /// The pool size and the resolved strides, as at:: pooling functions take them.
  at::IntArrayRef window() const { return *options.pool_size(); }
  at::IntArrayRef strides() const { return strides_; }

 private:
  std::vector<int64_t> strides_;
  std::vector<int64_t> pad_;  // (top, bottom, left, right) for "same"
};

}  // namespace torchfit
