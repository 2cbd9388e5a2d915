#pragma once
/// @file base_pooling.h
/// The base of the window pooling layers over 1, 2 or 3 spatial axes (MaxPooling1D/2D/3D,
/// AveragePooling1D/2D/3D), as Keras's keras/src/layers/pooling/base_pooling.py: one options struct, the
/// strides, the padding, the output shape, the pooling and its ONNX node; each layer names its kind.
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/expanding_array.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of a pooling layer over D spatial axes (1: a sequence's steps; 2: an image's rows, columns;
/// 3: a volume's depth, rows, columns). Defaults as Keras: pool 2 on every axis, strides = pool_size,
/// padding "valid".
template <size_t D>
struct PoolingOptions : LayerOptions<PoolingOptions<D>> {
  PoolingOptions(torch::ExpandingArray<D> pool_size = 2) : pool_size_(pool_size) {}  // NOLINT: Options(3)
  /// Window along each spatial axis, in steps/pixels; an int means every axis. Default 2.
  TORCH_ARG(torch::ExpandingArray<D>, pool_size);
  /// Strides, one per spatial axis or one value for all; unset ⇒ pool_size (Keras). The layer's own
  /// `options` hold the resolved list, which its config writes (the registry reads a list of 1 or D integers).
  TORCH_ARG(std::optional<std::vector<int64_t>>, strides) = std::nullopt;
  /// "valid" (default) or "same" (TensorFlow's padding: the odd step/pixel after the data).
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
/// Options of the 1-D pooling layers (sequences), 2-D (images) and 3-D (volumes).
using Pooling1DOptions = PoolingOptions<1>;
using Pooling2DOptions = PoolingOptions<2>;
using Pooling3DOptions = PoolingOptions<3>;

/// The pooling family: the maximum or the mean over windows of the spatial axes, per channel.
///
/// Inputs, Keras order → tensor: a sequence (steps, C) held (N, steps, C); an image (H, W, C) held
/// (N, C, H, W); a volume (D, H, W, C) held (N, D, H, W, C). The output keeps the layout, with each spatial
/// size n → valid: floor((n − p) / s) + 1, same: ceil(n / s) (TensorFlow's padding, the odd one after).
/// The maximum never takes a padded value (−inf); the mean counts only real values (tf.nn.avg_pool /
/// Keras). Sequences and volumes are moved channels first for LibTorch's pooling and back. No parameters.
/// Errors: ConfigError for non-positive pool/strides, strides that are not one value or D, an unknown
/// padding (at construction), an input of another rank or a pool larger than a "valid" input (at build).
class PoolingLayer : public Layer {
 public:
  /// ONNX: MaxPool / AveragePool (count_include_pad 0); a sequence as an (N, C, 1, steps) image between
  /// Transpose and Reshape nodes, a volume channels first between Transposes (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// Also an average "same" pooling: its count of real values per window follows the input's size.
  bool onnx_holds_built_size() const override {
    return (!max_ && padding_ == "same") || Layer::onnx_holds_built_size();
  }
  at::Tensor forward(const at::Tensor& x) override;
  /// The padding "same" adds, (before, after) per spatial axis from build — (top, bottom, left, right) for
  /// an image — zeros for "valid"; empty before build.
  const std::vector<int64_t>& padding_edges() const { return pad_; }
  /// Whether this is a max pooling (else an average).
  bool is_max() const { return max_; }

 protected:
  /// `class_name` is the layer's Keras class name; `rank` the spatial axes D; `max`: maximum, else mean.
  PoolingLayer(const char* class_name, const std::string& name, size_t rank, bool max);
  /// Checks pool/strides/padding and returns the strides resolved (pool_size when unset, one value ⇒ all).
  std::vector<int64_t> resolve(at::IntArrayRef pool, const std::optional<std::vector<int64_t>>& strides,
                               const std::string& padding);
  Shape build_impl(const Shape& input_shape) override;
  /// x with its channels first ((N, C, spatial…): LibTorch's pooling layout) and back.
  at::Tensor channels_first(const at::Tensor& x) const;
  at::Tensor channels_last(const at::Tensor& y) const;
  /// Whether "same" pads the channels-first `x` at all (it does not when the windows fit exactly).
  bool padded(const at::Tensor& x) const;
  /// The channels-first `x` padded with `value` for "same" (TensorFlow's rule, for x's own spatial sizes).
  at::Tensor pad(const at::Tensor& x, double value) const;
  /// The pool size and the resolved strides, as at:: pooling functions take them.
  at::IntArrayRef window() const { return pool_; }
  at::IntArrayRef strides() const { return strides_; }

 private:
  /// (before, after) per spatial axis of a channels-first input of spatial sizes `sizes`.
  std::vector<int64_t> pads_for(at::IntArrayRef sizes) const;
  /// at::max_poolNd / at::avg_poolNd of the channels-first x.
  at::Tensor pool(const at::Tensor& x) const;

  size_t rank_;
  bool max_;
  std::string padding_;
  std::vector<int64_t> pool_, strides_;
  std::vector<int64_t> pad_;  // (before, after) per spatial axis for "same"
  at::Tensor inv_count_;      // (1, 1, out…) 1 / real values per window ("same" averages only)
};

/// A pooling layer with its options (the arguments of D spatial axes); see PoolingLayer.
template <size_t D>
class PoolingImpl : public PoolingLayer {
 public:
  nlohmann::json config() const override { return base_config(options); }
  PoolingOptions<D> options;

 protected:
  PoolingImpl(const char* class_name, PoolingOptions<D> opts, bool max)
      : PoolingLayer(class_name, opts.name(), D, max), options(std::move(opts)) {
    set_declared_input_shape(options.input_shape());
    // Resolved (pool_size when unset), as Keras writes it in the config.
    options.strides(resolve(*options.pool_size(), options.strides(), options.padding()));
  }
};
/// The 2-D pooling layers' base (MaxPooling2D, AveragePooling2D).
using Pooling2DImpl = PoolingImpl<2>;

}  // namespace torchfit
