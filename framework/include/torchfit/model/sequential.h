#pragma once
/// @file sequential.h
/// Sequential — a linear stack of layers, as keras.Sequential.
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/layer.h>
#include <torchfit/model/mixed_precision.h>

namespace torchfit {

/// A linear stack of layers.
///
/// The first layer must declare `input_shape` (Keras order (H, W, C), batch excluded); each add() builds
/// the new layer from the previous output shape at once, so shape errors surface at add() naming the
/// layer. Automatic names follow Keras (conv2d, conv2d_1, …, counted per class within this model);
/// user-given names must be unique. forward() takes (N, C, H, W) tensors.
class SequentialImpl : public torch::nn::Module {
 public:
  explicit SequentialImpl(std::string name = "sequential");

  /// Appends a layer (any Layer subclass or its ModuleHolder). Errors: ConfigError when the first layer
  /// has no input_shape, a name is taken, or the layer cannot be built for the previous output shape.
  void add(std::shared_ptr<Layer> layer);
  template <typename Holder, typename = decltype(std::declval<Holder>().ptr())>
  void add(const Holder& holder) {
    add(std::static_pointer_cast<Layer>(holder.ptr()));
  }

  /// Forward pass (N, C, H, W) → model output (e.g. (N, K) probabilities), float32 under every dtype policy.
  /// Errors: ConfigError naming both shapes when x does not fit input_shape() (Keras (H, W, C) ⇒ a tensor
  /// (N, C, H, W)), and when the dtype policy cannot run on x's device (mixed_float16 on the CPU).
  at::Tensor forward(const at::Tensor& x);
  /// The same pass with the last layer's activation left out (logits for a softmax/sigmoid output).
  at::Tensor forward_logits(const at::Tensor& x);
  /// The last layer's output activation ("softmax", "sigmoid", "linear", …).
  std::string output_activation() const;

  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  /// The layer called `name`. Errors: ConfigError listing the names.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;

  /// Model input shape (Keras order) and output shape; errors when empty.
  const Shape& input_shape() const;
  const Shape& output_shape() const;

  int64_t count_params() const;
  int64_t trainable_params() const;
  int64_t non_trainable_params() const;
  /// Forward FLOPs for one sample (2 per multiply-add); a training step costs ≈ 3× forward per sample.
  int64_t flops_per_sample() const;
  /// FLOPs of one training step per sample: ≈ 3× forward (forward, input and weight gradients) minus
  /// the first layer's input gradient, which is never needed.
  int64_t train_flops_per_sample() const;

  /// The Keras 2.6 summary text (layout in docs/keras_semantics.md), ending with a newline.
  std::string summary(int line_length = 65) const;
  /// Prints summary() to `os`.
  void print_summary(std::ostream& os) const;

  /// Architecture as JSON (Keras model.to_json analogue): {"format_version", "class_name": "Sequential",
  /// "config": {"name", "layers": [{"class_name", "config"}, …]}}.
  nlohmann::json to_json() const;
  /// Rebuilds a model from to_json() output. Errors: ConfigError naming an unknown layer class or a
  /// bad field.
  static std::shared_ptr<SequentialImpl> from_json(const nlohmann::json& json);

  const std::string& model_name() const { return name_; }

  /// Memory layout of the 4-D activations; the logical order stays (N, C, H, W) and results are the
  /// same up to float rounding. forward() converts a 4-D input once and the layers keep the layout:
  ///  - "auto" (default): channels_last (NHWC in memory) when the input is on the CPU, contiguous on
  ///    CUDA. LibTorch 1.13's CPU max pooling is ~10× faster on channels_last tensors and oneDNN
  ///    convolutions take them without reorders (the article's CNN: see docs/benchmarks.md);
  ///  - "channels_last": always (CPU and CUDA);
  ///  - "contiguous": never (the layout of PyTorch's default nn.Sequential).
  /// A 4-D model output is returned contiguous whatever the choice. Not part of to_json(): a run-time
  /// choice. Errors: ConfigError naming another value.
  void set_memory_format(const std::string& name);
  const std::string& memory_format() const { return memory_format_; }
  /// Whether 4-D inputs on `device` run channels_last under the current setting.
  bool uses_channels_last(const c10::Device& device) const;

  /// A layer whose output activation is "relu" (Conv2D, DepthwiseConv2D, Activation("relu"), …)
  /// directly followed by MaxPooling2D runs as layer without its ReLU → pooling → ReLU (default true). ReLU is
  /// monotonic, so max(relu(a), relu(b), …) = relu(max(a, b, …)) and the gradient reaches the same element: outputs and
  /// gradients are the same, while the ReLU and its backward touch the pooled tensor (4× smaller for 2×2 pooling). The
  /// layers and summary() are unchanged. false runs every layer as written (for comparisons).
  void set_pool_before_relu(bool on) { pool_before_relu_ = on; }
  bool pool_before_relu() const { return pool_before_relu_; }

  /// The dtype policy the layers compute under (mixed_precision.h; Keras: each layer's `dtype_policy`,
  /// one per model here). Default: the global policy when the model was created
  /// (mixed_precision::set_global_policy). A mixed policy casts the input to the compute dtype, runs the
  /// layers under LibTorch autocast, and casts the last layer's output to float32 before its activation:
  /// forward() returns float32 for every policy, layer outputs in between are in the compute dtype.
  /// Saved in to_json() ("dtype_policy"; a JSON without it takes the global policy, as a Keras layer config
  /// without a dtype does) and printed by summary() when not float32 (float32 keeps Keras's text).
  /// Errors: ConfigError for an unknown name.
  void set_dtype_policy(const mixed_precision::Policy& policy) { dtype_policy_ = policy; }
  void set_dtype_policy(const std::string& name) { dtype_policy_ = mixed_precision::Policy(name); }
  const mixed_precision::Policy& dtype_policy() const { return dtype_policy_; }

 private:
  void check_input(const at::Tensor& x) const;
  at::Tensor prepare_input(const at::Tensor& x) const;
  at::Tensor run(const at::Tensor& x, bool logits);
  at::Tensor run_layers(at::Tensor h, bool last_without_activation);
  bool pools_before_relu(size_t i) const;

  std::string name_;
  std::string memory_format_ = "auto";
  bool pool_before_relu_ = true;
  mixed_precision::Policy dtype_policy_ = mixed_precision::global_policy();
  std::vector<std::shared_ptr<Layer>> layers_;
};
TORCH_MODULE(Sequential);

/// Current JSON format version written by to_json().
constexpr int kModelFormatVersion = 1;

}  // namespace torchfit
