#pragma once
/// @file merge.h
/// Merge layers — layers taking a list of tensors, as keras.layers.Add, Subtract, Multiply, Average,
/// Maximum, Minimum (Keras's _Merge base), Concatenate and Dot. Called on symbolic tensors with
/// `Add()->call({a, b})`; in a graph the Model passes them the list of their inputs.
#include <torch/arg.h>
#include <torch/nn/pimpl.h>

#include <torchfit/layers/keras_axes.h>
#include <torchfit/layers/layer.h>

namespace torchfit {

/// Options of the element-wise merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum): only
/// the name. `input_shape` is accepted for symmetry with other layers and ignored.
struct MergeOptions : LayerOptions<MergeOptions> {
 public:
  template <typename Args>
  void args(Args&) {}
};

/// Base of the layers that take a list of tensors (Keras's _Merge): build_multi checks the input count
/// and shapes, forward_multi the tensor count. The single-tensor forward/build throw ConfigError.
///
/// Element-wise merges: inputs of one rank whose dimensions are equal or 1 (broadcast as Keras); the output
/// shape is the per-dimension maximum. Inputs (N, C, H, W) [Keras (H, W, C)] or (N, D); output the same.
/// Errors: ConfigError naming the layer and every shape when the count or the shapes do not fit.
class MergeImpl : public Layer {
 public:
  bool takes_list() const override { return true; }
  at::Tensor forward(const at::Tensor& x) override;
  at::Tensor forward_multi(const std::vector<at::Tensor>& xs) override;
  /// Keras masks (keras/src/layers/merging/base_merge.py): the output's mask is the logical or of the
  /// inputs' when every input has one, else none. Maximum and Minimum compute with them (a masked step of
  /// one input takes the other's value, Keras's _apply_merge_op_and_or_mask); the others ignore them.
  bool supports_masking() const override { return true; }
  bool uses_mask() const override { return merges_masked_steps(); }
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) override;

 protected:
  /// Whether masked steps take the other inputs' values (Maximum, Minimum). Default false.
  virtual bool merges_masked_steps() const { return false; }
  /// `min_inputs`..`max_inputs` tensors (max_inputs 0 = unlimited).
  MergeImpl(const char* class_name, const std::string& name, size_t min_inputs, size_t max_inputs);
  Shape build_impl(const Shape& input_shape) override;
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  /// The merge itself on checked tensors.
  virtual at::Tensor merge(const std::vector<at::Tensor>& xs) = 0;
  /// ONNX: the binary operator `op` over `inputs`, left to right (Add, Mul, Max, Min).
  std::string onnx_chain(io::OnnxGraph& graph, const std::vector<std::string>& inputs, const std::string& op) const;
  /// Checks the count (shapes are checked by the subclass); "layer 'add' (Add) needs …" errors.
  void check_count(size_t n, const std::string& shapes) const;

 private:
  size_t min_inputs_, max_inputs_;
};

// One element-wise merge layer: its class, options, config and merge. y = the operation over the list.
#define TORCHFIT_ELEMENTWISE_MERGE(CLASS, MIN, MAX, MASKED)                                               \
  class CLASS##Impl : public MergeImpl {                                                                  \
    TORCHFIT_LAYER_CLASS(CLASS);                                                                          \
                                                                                                          \
   public:                                                                                                \
    explicit CLASS##Impl(MergeOptions o = {})                                                             \
        : MergeImpl(keras_class_name, o.name(), MIN, MAX), options(std::move(o)) {}                       \
    nlohmann::json config() const override { return base_config(options); }                               \
    std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override; \
    MergeOptions options;                                                                                 \
                                                                                                          \
   protected:                                                                                             \
    bool merges_masked_steps() const override { return MASKED; }                                          \
    at::Tensor merge(const std::vector<at::Tensor>& xs) override;                                         \
  };                                                                                                      \
  TORCH_MODULE(CLASS)

/// Add: x0 + x1 + … (2 or more inputs; Keras's keras.layers.Add).
TORCHFIT_ELEMENTWISE_MERGE(Add, 2, 0, false);
/// Subtract: x0 − x1 (exactly 2 inputs).
TORCHFIT_ELEMENTWISE_MERGE(Subtract, 2, 2, false);
/// Multiply: x0 · x1 · … element-wise.
TORCHFIT_ELEMENTWISE_MERGE(Multiply, 2, 0, false);
/// Average: (x0 + x1 + …) / n.
TORCHFIT_ELEMENTWISE_MERGE(Average, 2, 0, false);
/// Maximum: element-wise maximum.
TORCHFIT_ELEMENTWISE_MERGE(Maximum, 2, 0, true);
/// Minimum: element-wise minimum.
TORCHFIT_ELEMENTWISE_MERGE(Minimum, 2, 0, true);
#undef TORCHFIT_ELEMENTWISE_MERGE

/// Options of Concatenate.
struct ConcatenateOptions : LayerOptions<ConcatenateOptions> {
  /// Keras axis over the full shape including the batch: −1 (default) is the last Keras axis, the channels
  /// of (H, W, C) (tensor dim 1 of (N, C, H, W)); 1 and 2 are H and W (tensor dims 2 and 3). 0 (the batch)
  /// is refused.
  TORCH_ARG(int64_t, axis) = -1;

 public:
  template <typename Args>
  void args(Args& a) {
    a("axis", axis());
  }
};

/// Concatenate: joins 2 or more inputs along `axis` (keras.layers.Concatenate); every other dimension must
/// be equal. Output: the inputs' shape with the axis summed. Errors: ConfigError naming the layer and the
/// shapes, or the axis when it is 0 or out of range.
class ConcatenateImpl : public MergeImpl {
  TORCHFIT_LAYER_CLASS(Concatenate);

 public:
  explicit ConcatenateImpl(ConcatenateOptions options = {});
  nlohmann::json config() const override { return base_config(options); }
  /// ONNX: Concat over the tensor axis of the Keras axis.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// Keras's Concatenate.compute_mask for sequences (N, steps, features): each input's mask (all true for
  /// an input without one) broadcast over its features, joined along the axis, any over the last axis.
  /// Errors: ConfigError naming the layer for masked inputs of another rank.
  at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const override;
  /// The tensor dimension (N, C, H, W order) the Keras axis maps to; valid after build.
  int64_t tensor_dim() const { return tensor_dim_; }
  ConcatenateOptions options;

 protected:
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  at::Tensor merge(const std::vector<at::Tensor>& xs) override;

 private:
  int64_t tensor_dim_ = 1;
};
TORCH_MODULE(Concatenate);

/// Options of Dot. Required: axes.
struct DotOptions : LayerOptions<DotOptions> {
  explicit DotOptions(KerasAxes axes) : axes_(std::move(axes)) {}
  /// For the registry only (layer_args.h): leaves axes unset, to be read from a config.
  explicit DotOptions(FromConfig) {}
  /// Keras `axes`, counted over each input's full shape with the batch (0 is the batch, refused; −1 the
  /// last): one axis for both inputs, or a pair [axis of the first, axis of the second]. Written back in
  /// the form given (an int or a list).
  TORCH_ARG(KerasAxes, axes);
  /// L2-normalise both inputs along their dot axis first (Keras 3's ops.normalize: x · min(rsqrt(Σx²),
  /// 1e7), the norm floored at Keras's epsilon 1e-7), making the output the cosine similarity. Default false.
  TORCH_ARG(bool, normalize) = false;

 public:
  template <typename Args>
  void args(Args& a) {
    a.required("axes", axes());
    a("normalize", normalize());
  }
};

/// Dot: the dot product of two inputs along one axis of each, per sample (keras.layers.Dot, Keras 3's
/// batch_dot): the output holds the first input's other axes, then the second's, e.g. vectors (D) · (D) →
/// (1); sequences (L, D) · (M, D), axes 2 → (L, M); (L, D) · (D), axes (2, 1) → (L). Per-sample inputs of
/// rank 1 or 2 (vectors (N, D), sequences (N, steps, D), held in Keras's order). No parameters.
/// Errors: ConfigError naming the layer: axes not an int or a pair (construction); not two inputs, a rank
/// other than 1 or 2, the batch axis, an axis out of range, or dot axes of different sizes (build).
class DotImpl : public MergeImpl {
  TORCHFIT_LAYER_CLASS(Dot);

 public:
  explicit DotImpl(DotOptions options);
  nlohmann::json config() const override { return base_config(options); }
  /// ONNX: (the L2 normalisation: Mul, ReduceSum as ReduceMean·size, Sqrt, Relu, Add, Div), Reshape or
  /// Transpose of each input to (N, P, K) / (N, K, Q), MatMul, Reshape to the output.
  std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const override;
  /// None (Keras's Dot.compute_mask).
  at::Tensor compute_mask(const std::vector<at::Tensor>&, const std::vector<at::Tensor>&) const override { return {}; }
  DotOptions options;

 protected:
  Shape build_multi_impl(const std::vector<Shape>& input_shapes) override;
  at::Tensor merge(const std::vector<at::Tensor>& xs) override;

 private:
  std::vector<int64_t> axes_;  // the tensor axis of each input (Keras order: the same as Keras's)
};
TORCH_MODULE(Dot);

}  // namespace torchfit
