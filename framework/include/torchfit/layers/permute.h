#pragma once
/// @file permute.h
/// Permute — reorders the per-sample axes, as keras.layers.Permute.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of Permute. Required: dims.
struct PermuteOptions : LayerOptions<PermuteOptions> {
  explicit PermuteOptions(Shape dims) : dims_(std::move(dims)) {}
  /// For the registry only (layer_args.h): leaves dims unset, to be read from a config.
  explicit PermuteOptions(FromConfig) {}
  /// A permutation of 1..rank over the Keras per-sample axes (batch excluded, 1-based as Keras):
  /// output axis i is input axis dims[i]; (2, 1, 3) swaps H and W of an (H, W, C) image.
  TORCH_ARG(Shape, dims);

 public:
  /// The Keras arguments, each listed once (layer_args.h): config() writes them, the registry reads them.
  template <typename Args>
  void args(Args& a) {
    a.required("dims", dims());
  }
};

/// Permutes the axes of each sample in Keras's order, as keras.layers.Permute: an input of Keras shape
/// (d1, …, dr) gives (d_dims[0], …, d_dims[r−1]). Tensors stay in torchfit's order outside the layer — an
/// image (N, C, H, W) is Keras (H, W, C), and a rank-3 output is returned as an image (N, C', H', W') of
/// Keras shape (H', W', C') — so the result is the one Keras computes, read in Keras's order. One
/// Transpose (a view; no copy). No parameters.
/// Errors: ConfigError when dims is not a permutation of 1..rank of the input (naming dims and the shape).
class PermuteImpl : public Layer {
  TORCHFIT_LAYER_CLASS(Permute);

 public:
  explicit PermuteImpl(PermuteOptions options);
  at::Tensor forward(const at::Tensor& x) override;
  nlohmann::json config() const override;
  /// ONNX: one Transpose with the composed permutation (its source file writes it).
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  PermuteOptions options;

 protected:
  Shape build_impl(const Shape& input_shape) override;

 private:
  std::vector<int64_t> tensor_perm_;  // on the (N, …) tensor: torchfit order in → torchfit order out
};
TORCH_MODULE(Permute);

}  // namespace torchfit
