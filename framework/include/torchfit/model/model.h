#pragma once
/// @file model.h
/// Model — a functional graph of layers, as keras.Model(inputs, outputs) (Keras's Functional).
/// Sequential (sequential.h) is a Model whose graph is a chain.
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>
#include <nlohmann/json.hpp>

#include <torchfit/layers/keras_tensor.h>
#include <torchfit/layers/layer.h>
#include <torchfit/model/mixed_precision.h>

namespace torchfit {

/// A graph of layers from symbolic inputs to symbolic outputs (several of each allowed):
///
///   auto x = Input({32, 32, 3});
///   auto y = Conv2D(Conv2DOptions(16, 3).padding("same"))->call(x);
///   auto z = Add()->call({x2, y});  ...
///   Model model({x}, {out}, "resnet");
///
/// The constructor walks back from the outputs, orders the nodes topologically, names unnamed layers
/// per class as Keras (conv2d, conv2d_1, …; inputs input_1, …) and registers each layer once (a layer
/// called twice is shared: its weights exist once). forward() runs the nodes in that order.
/// Errors (ConfigError, naming them): an output that depends on an Input not among `inputs` (dangling
/// input), an input no output depends on (unused input), the same input twice, two different layers with
/// one name, an empty input or output list.
/// fit/evaluate/predict and the apps train single-input single-output models; several inputs/outputs
/// are built, run (forward_multi), saved and summarized through the API.
class ModelImpl : public torch::nn::Module {
 public:
  ModelImpl(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name = "model");
  ~ModelImpl() override = default;

  /// Forward pass of a single-input single-output model: (N, C, H, W) / (N, D) → the output, float32 under
  /// every dtype policy. Errors: ConfigError naming both shapes when x does not fit input_shape(), when the
  /// model has several inputs/outputs, or when the dtype policy cannot run on x's device.
  at::Tensor forward(const at::Tensor& x);
  /// The same pass with the output layer's activation left out (logits for a softmax/sigmoid output).
  at::Tensor forward_logits(const at::Tensor& x);
  /// Forward pass on one tensor per input (in `inputs` order); one tensor per output.
  std::vector<at::Tensor> forward_multi(const std::vector<at::Tensor>& xs, bool logits = false);
  /// The (single) output layer's activation ("softmax", "sigmoid", "linear", …).
  std::string output_activation() const;

  /// The model's layers, each once, in topological order (a functional model's InputLayers first;
  /// Sequential leaves its implicit input out, as Keras's model.layers).
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }
  /// The layer called `name`. Errors: ConfigError listing the names.
  std::shared_ptr<Layer> get_layer(const std::string& name) const;
  /// The graph's nodes (layer calls) in topological order, input nodes excluded: what forward() runs.
  const std::vector<std::shared_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<KerasTensor>& inputs() const { return inputs_; }
  const std::vector<KerasTensor>& outputs() const { return outputs_; }
  /// Keras's model.input_names / model.output_names: the layer name of each input / output, in order.
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  /// Whether the graph is a chain (one input, each node feeding the next): Sequential's layout.
  bool is_chain() const;

  /// Input shape (Keras order) of a single-input model / output shape of a single-output model.
  /// Errors: ConfigError when the model is empty or has several.
  const Shape& input_shape() const;
  const Shape& output_shape() const;
  /// Axes (0 = H, 1 = W) of input `i` whose size Keras left unknown (None): forward() takes any size there
  /// (InputLayerOptions::unknown_axes). Empty for a fixed-size input.
  std::vector<int64_t> unknown_input_axes(size_t i = 0) const;
  /// The output shape of every node for other per-sample input shapes (Keras order, one per input), each
  /// layer keeping its weights (Layer::output_shape_for; shapes checked once are remembered). Errors:
  /// ConfigError naming the first layer that cannot take its input at those shapes, both shapes, and the
  /// layer before it whose output size follows the image size (a Flatten, a Reshape) when there is one.
  std::map<const Node*, Shape> shapes_for(const std::vector<Shape>& input_shapes);

  /// The Keras masks of the last forward's outputs (one per output, bool (N, steps); undefined where an
  /// output has none): Embedding with mask_zero or Masking made them and every layer on the way passed
  /// them on (Layer::supports_masking). fit and evaluate weight the loss and metrics by them, as Keras 3.
  const std::vector<at::Tensor>& output_masks() const { return output_masks_; }
  /// Whether the graph holds a layer that makes masks (Layer::makes_mask): forward then carries them.
  bool carries_masks() const { return carries_masks_; }
  /// The nodes, in topological order, whose layer's values use a mask (Layer::uses_mask) and whose input may
  /// carry one (a layer that makes masks before it, every layer between passing masks on): what an exporter
  /// to a format without Keras masks must refuse.
  std::vector<std::shared_ptr<Node>> masked_consumers() const;

  /// Sum of the layers' weight regularization terms and the activity regularization terms of the last
  /// forward (Keras's sum(model.losses), Layer::set_activity_regularizer), added to the loss by fit and
  /// evaluate as Keras does; undefined when no layer has a regularizer.
  at::Tensor regularization_loss() const;

  int64_t count_params() const;
  int64_t trainable_params() const;
  int64_t non_trainable_params() const;
  /// Forward FLOPs for one sample (2 per multiply-add; a layer called twice counts twice).
  int64_t flops_per_sample() const;
  /// FLOPs of one training step per sample: ≈ 3× forward minus the input gradient of the layers that
  /// read a model input (never needed).
  int64_t train_flops_per_sample() const;

  /// Keras's summary text, ending with a newline: the functional layout with `Connected to` (tf.keras
  /// 2.4–2.10, 98 columns) for a graph, the Sequential layout (65 columns) for Sequential.
  /// line_length 0 = the layout's default.
  virtual std::string summary(int line_length = 0) const;
  void print_summary(std::ostream& os) const;

  /// Architecture as tf.keras 2.x functional JSON (Keras model.to_json()): {"class_name": "Functional",
  /// "config": {"name", "layers": [{"class_name", "config", "name", "inbound_nodes"}], "input_layers",
  /// "output_layers", "dtype_policy"}, "keras_version", "backend", "format_version"}. Read by
  /// model_from_json (keras_json.h).
  virtual nlohmann::json to_json() const;

  const std::string& model_name() const { return name_; }

  /// Memory layout of 4-D activations: "auto" (default: channels_last on the CPU), "channels_last",
  /// "contiguous"; the logical order stays (N, C, H, W). Errors: ConfigError naming another value.
  void set_memory_format(const std::string& name);
  const std::string& memory_format() const { return memory_format_; }
  bool uses_channels_last(const c10::Device& device) const;

  /// A node whose layer's output activation is "relu", whose only consumer is the next node, a
  /// MaxPooling2D, runs as layer without ReLU → pooling → ReLU (exact: ReLU is monotonic). Default true.
  void set_pool_before_relu(bool on) {
    pool_before_relu_ = on;
    plan();
  }
  bool pool_before_relu() const { return pool_before_relu_; }

  /// The dtype policy the layers compute under (mixed_precision.h). Saved in to_json() ("dtype_policy").
  void set_dtype_policy(const mixed_precision::Policy& policy) { dtype_policy_ = policy; }
  void set_dtype_policy(const std::string& name) { dtype_policy_ = mixed_precision::Policy(name); }
  const mixed_precision::Policy& dtype_policy() const { return dtype_policy_; }

  /// Orders layers() as `names` (model_from_json keeps the file's order, as Keras's summary does).
  void reorder_layers(const std::vector<std::string>& names);

 protected:
  explicit ModelImpl(std::string name);
  /// (Re)builds the execution plan from inputs to outputs; registers new layers. Errors as the constructor.
  void set_graph(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, bool include_input_layers);
  /// Model-local index of a node among its layer's nodes in this model (Keras's node_index in summaries/JSON).
  int local_node_index(const Node* node) const;
  std::string functional_summary(int line_length) const;
  std::string describe() const;

  std::string name_;
  std::string kind_ = "Model";  // "Sequential" in messages of a Sequential
  std::vector<std::shared_ptr<Layer>> layers_;

 private:
  struct Step {
    std::shared_ptr<Node> node;
    std::vector<size_t> in;  // slots read
    size_t out = 0;          // slot written
    bool fuse_pool = false;  // runs with the next step (a MaxPooling2D) as layer → pool → ReLU
    bool output = false;     // its tensor is a model output
    bool consumed = false;   // its tensor is also read by other nodes
  };
  void plan();
  void name_layers(const std::vector<std::shared_ptr<Node>>& order);
  at::Tensor prepare_input(const at::Tensor& x, size_t i) const;
  void check_input_sizes(const std::vector<at::Tensor>& xs);
  std::set<std::vector<Shape>> checked_shapes_;  // other input shapes shapes_for() accepted
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& xs, bool logits);
  void run_steps(std::vector<at::Tensor>& values, bool logits);
  at::Tensor run_step(const Step& s, const std::vector<at::Tensor>& values, std::vector<at::Tensor>& masks,
                      bool logits);

  std::string memory_format_ = "auto";
  bool pool_before_relu_ = true;
  mixed_precision::Policy dtype_policy_ = mixed_precision::global_policy();
  std::vector<KerasTensor> inputs_, outputs_;
  std::vector<std::shared_ptr<Node>> nodes_;  // topological order, input nodes excluded
  std::map<const Node*, size_t> slot_;        // node → value slot (inputs first)
  std::map<const Node*, int> local_index_;
  std::vector<Step> steps_;
  std::vector<int> uses_;     // consumers per slot (outputs never freed)
  at::Tensor activity_loss_;  // the activity regularizers' terms of the last forward (undefined: none)
  bool carries_masks_ = false;
  std::vector<at::Tensor> output_masks_;
  std::set<std::string> mask_warned_;  // layers that stopped a mask (warned once)
};

/// Holder of a ModelImpl (as TORCH_MODULE). A Sequential converts to it, so everything that takes a
/// Model takes a Sequential.
class Model : public torch::nn::ModuleHolder<ModelImpl> {
 public:
  Model(std::nullptr_t) : ModuleHolder(nullptr) {}  // NOLINT: implicit, as TORCH_MODULE's holders
  Model(std::shared_ptr<ModelImpl> impl) : ModuleHolder(std::move(impl)) {}  // NOLINT
  Model(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name = "model")
      : ModuleHolder(std::make_shared<ModelImpl>(std::move(inputs), std::move(outputs), std::move(name))) {}
  template <typename Derived,
            typename = std::enable_if_t<std::is_base_of_v<ModelImpl, Derived> && !std::is_same_v<ModelImpl, Derived>>>
  Model(const torch::nn::ModuleHolder<Derived>& derived)  // NOLINT: implicit, as a derived-to-base pointer
      : ModuleHolder(derived.is_empty() ? std::shared_ptr<ModelImpl>()
                                        : std::static_pointer_cast<ModelImpl>(derived.ptr())) {}
};

/// The call of the Dense layer whose units are a single-output model's class scores: the output layer, or
/// the Dense that output Activation / Softmax / Dropout layers (one input each) read. nullptr when the
/// output is computed otherwise (a merge of two heads, a pooling layer, …) or the model has several outputs.
std::shared_ptr<Node> class_scores_node(const ModelImpl& model);

/// Keras's transfer-learning recipe, step 1: a new classification head.
///   x = base.layers[-1].input;  out = Dense(classes, activation="softmax", name=name)(x)
///   model = keras.Model(base.inputs, out)
/// The head replaced is the output layer of a single-input single-output model — a Dense, or Activation /
/// Softmax / Dropout layers together with the Dense before them (class_scores_node); the new Dense(`classes`, softmax)
/// reads what that Dense read (e.g. ResNet-8's Flatten output). The base's layers (and weights) are shared
/// with `base`, not copied. Errors: ConfigError naming the output layer and its class when it is no Dense
/// head, when the model has several inputs/outputs, for classes < 1, or when `name` is taken.
Model with_new_head(const Model& base, int64_t classes, const std::string& name = "new_head");

/// Keras's transfer-learning recipe, step 2 (`base_model.trainable = False`): freezes every layer of
/// `model` except its output layer — the head — (Layer::set_trainable(false): no gradients, no optimizer
/// updates; frozen BatchNormalization runs in inference mode, its moving statistics unchanged). Returns the
/// number of layers frozen. Errors: ConfigError for a model with several outputs.
int freeze_all_but_head(ModelImpl& model);

/// Current torchfit JSON format version written by to_json().
constexpr int kModelFormatVersion = 1;

}  // namespace torchfit
