#pragma once
/// @file layer.h
/// The Layer base: a torch::nn::Module with a Keras name, a JSON config, lazy build and parameter counts.
#include <torch/nn/module.h>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include <torchfit/error.h>
#include <torchfit/layers/initializers.h>
#include <torchfit/layers/keras_tensor.h>
#include <torchfit/layers/layer_args.h>
#include <torchfit/layers/shape.h>

namespace torchfit {

namespace io {
class OnnxGraph;  // io/onnx_graph.h
}
namespace saving {
using OnnxGraph = io::OnnxGraph;  // its name in saving/onnx.h too: layers written against saving/ compile
}

/// How a Keras file stores a layer's weights where it differs from Keras 2's layout: the two Keras 1
/// facts keras::load_keras_weights reads from the file (keras_import.h). Default: Keras 2+.
struct KerasWeightOptions {
  /// A Keras 1 model with dim_ordering "th": convolution kernels stored (out, in, kh, kw).
  bool keras1_th = false;
  /// A Theano-trained Keras 1 model: convolution kernels flipped in both spatial axes.
  bool flip_kernels = false;
};

/// Base class of every torchfit layer (as keras.layers.Layer).
///
/// Contract:
/// - The constructor only stores the configuration; build(input_shape) creates the parameters from the
///   inferred per-sample input shape (Keras order, batch excluded) and returns the output shape. Building
///   twice with the same shape is a no-op. Another shape is accepted when the layer's weights would be
///   the same for it (as Keras: a shared Conv2D on two image sizes, pooling, per-channel normalisation,
///   Dense on the last axis): output_shape_for() gives the output and forward() takes such inputs; a
///   shape that changes a weight (another channel count, a Dense after a Flatten of another size) throws
///   ConfigError naming both shapes and the weight.
/// - forward() takes and returns LibTorch tensors in (N, C, H, W) / (N, D) order.
/// - config() returns the Keras-style JSON config (always holding "name"): `return base_config(options);`
///   for a layer whose options struct lists its arguments (layer_args.h); the registry rebuilds the
///   layer from it (TORCHFIT_REGISTER_LAYER, registry.h).
/// Errors: ConfigError naming the layer and shapes when the layer cannot be built.
/// Multi-input layers (Merge, merge.h) return true from takes_list() and implement build_multi_impl and
/// forward_multi; their single-tensor forward and build throw.
class Layer : public torch::nn::Module {
 public:
  /// `class_name` is the Keras class name ("Conv2D"), `name` the user-given name ("" ⇒ automatic).
  Layer(std::string class_name, std::string name);
  ~Layer() override = default;

  /// Keras class name, e.g. "Conv2D".
  const std::string& class_name() const { return class_name_; }
  /// Layer name, e.g. "conv2d_1" (empty until given or assigned by Sequential::add).
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  /// Declared input shape of a first layer (Keras `input_shape`, (H, W, C)), if any.
  const std::optional<Shape>& declared_input_shape() const { return input_shape_; }
  void set_declared_input_shape(std::optional<Shape> s) { input_shape_ = std::move(s); }

  /// Builds the layer for `input_shape` (Keras order, batch excluded); returns the output shape.
  Shape build(const Shape& input_shape);
  /// Builds for a list of input shapes (multi-input layers; a single-input layer takes a list of one).
  /// Errors: ConfigError naming the layer and the shapes (wrong count, shapes that do not fit).
  Shape build_multi(const std::vector<Shape>& input_shapes);
  bool built() const { return built_; }
  /// The input shape it was built for (the first one for a multi-input layer).
  const Shape& input_shape() const;
  /// Every input shape it was built for (one for a single-input layer).
  const std::vector<Shape>& input_shapes() const;
  const Shape& output_shape() const;
  /// The output shape for other input shapes (one per input) of this built layer, without new weights:
  /// the shapes it was built for give output_shape(); others are checked by building a copy from
  /// config() and comparing every weight's shape (results are remembered). Errors: ConfigError naming
  /// the layer, both shapes and the first weight whose shape differs, or the copy's own build error.
  Shape output_shape_for(const std::vector<Shape>& input_shapes);

  /// Forward pass on a batch (N, C, H, W) or (N, D).
  virtual at::Tensor forward(const at::Tensor& x) = 0;

  /// Whether the layer takes a list of tensors (Add, Concatenate, …). Default false.
  virtual bool takes_list() const { return false; }
  /// Forward pass on a list of tensors: multi-input layers override it; the default takes a list of one.
  virtual at::Tensor forward_multi(const std::vector<at::Tensor>& xs);

  /// Keras's masks: a bool tensor (N, steps) per sequence, true at the steps that hold data, made by
  /// Embedding with mask_zero and by Masking and carried along the graph by Model's forward as Keras 3.15
  /// carries them (Layer.__call__: a layer's call gets its inputs' masks, its output gets compute_mask's).
  /// Whether the layer passes a mask on (Keras's supports_masking). Default false: the mask stops at this
  /// layer (Keras warns; Model logs it once per layer).
  virtual bool supports_masking() const { return false; }
  /// The output's mask from the inputs and their masks (one per input, an undefined tensor = no mask), as
  /// Keras's compute_mask. Default: masks[0] when supports_masking(), else none.
  virtual at::Tensor compute_mask(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) const;
  /// The forward pass given the inputs' masks (Keras's call(…, mask=…)), at least one of them defined. Layers
  /// whose values depend on a mask override it (the recurrent, wrapper and attention layers, Masking,
  /// GlobalAveragePooling1D, Maximum, Minimum, BatchNormalization in training). Default: forward /
  /// forward_multi, the masks unused.
  virtual at::Tensor forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks);
  /// Whether a mask on its inputs changes this layer's values in inference (it overrides forward_masked for
  /// that): the exporters refuse a model where a mask reaches such a layer and the format has no masks
  /// (ONNX) or computes otherwise (TensorFlow.js's GlobalAveragePooling1D). Default false.
  virtual bool uses_mask() const { return false; }
  /// Whether this layer makes a mask from an unmasked input (Embedding with mask_zero, Masking): Model
  /// carries masks only through a graph that holds such a layer. Default false.
  virtual bool makes_mask() const { return false; }

  /// Calls the layer on a symbolic tensor (Keras `layer(x)`): builds it for x's shape (or checks that
  /// shape against the one it was built for: a layer called twice is shared, its weights exist once) and
  /// returns the symbolic output of a new node. Errors: ConfigError naming the layer and both shapes.
  KerasTensor call(const KerasTensor& x);
  /// The same on a list of symbolic tensors (merge layers: `Add()->call({a, b})`).
  KerasTensor call(const std::vector<KerasTensor>& xs);
  /// Number of calls on symbolic tensors so far (Keras's len(layer._inbound_nodes)).
  int call_count() const { return call_count_; }

  /// Keras `layer.trainable` (default true). false freezes the layer: its weights get no gradient (so
  /// no optimizer update and no optimizer state change) and count as non-trainable in summary();
  /// a frozen BatchNormalization normalises with its moving statistics even in training (tf.keras >= 2.0).
  /// Works before and after build. Written to config() as "trainable": false.
  bool trainable() const { return trainable_; }
  void set_trainable(bool trainable);

  /// A Keras weight regularizer (keras.regularizers L1, L2, L1L2): adds l1·Σ|w| + l2·Σw² to the loss.
  struct Regularizer {
    double l1 = 0.0;
    double l2 = 0.0;
  };
  /// Regularizes the weight `weight` ("kernel", "bias", "depthwise_kernel", "gamma", "beta"), as Keras's
  /// `kernel_regularizer=L2(l2)` etc. Config: "<weight>_regularizer" ("depthwise_regularizer" for the
  /// depthwise kernel) as Keras writes it, {"class_name": "L2", "config": {"l2": …}}.
  void set_regularizer(const std::string& weight, Regularizer r);
  const std::map<std::string, Regularizer>& regularizers() const { return regularizers_; }
  /// Σ over the regularized weights (a 0-dim tensor on the weights' device), undefined when there are
  /// none. Errors: ConfigError naming the layer and a weight it does not have.
  at::Tensor regularization_loss() const;

  /// Keras's per-weight initializer (`kernel_initializer=HeNormal()`, `recurrent_initializer`, …): `weight`
  /// is one of keras_weight_names() ("kernel", "bias", "recurrent_kernel", "depthwise_kernel",
  /// "pointwise_kernel", "embeddings", "gamma", "beta", "moving_mean", "moving_variance", "alpha" …). When
  /// the layer is built, the weight is drawn by `init` in Keras's shape (so a kernel's fans are Keras's:
  /// receptive field × channels) in place of the class's default (Keras's: glorot_uniform kernels,
  /// orthogonal recurrent kernels, zero biases, …). Set before build; a weight the built layer does not
  /// have (bias with use_bias false, as Keras configs still name bias_initializer) is left alone.
  /// Config: "<weight>_initializer" ("depthwise_initializer", "pointwise_initializer",
  /// "recurrent_initializer" for those kernels) as Keras writes it. Errors: ConfigError naming the layer
  /// when it is already built, and at build for a class without a Keras weight layout or a shape the
  /// initializer cannot draw (Identity on a kernel of rank ≠ 2).
  void set_initializer(const std::string& weight, Initializer init);
  const std::map<std::string, Initializer>& initializers() const { return initializers_; }
  /// The Keras names of keras_weights()'s entries, in its order. Default: the layer's own parameters and
  /// buffers, Keras's names first in Keras's order (embeddings, depthwise_kernel, kernel, pointwise_kernel,
  /// recurrent_kernel, bias, gamma, beta, moving_mean, moving_variance, alpha, scale, mean, variance,
  /// count), any other names after in registration order. A user layer whose Keras order differs overrides it.
  virtual std::vector<std::string> keras_weight_names() const;

  /// Keras's `activity_regularizer` (an L1, L2 or L1L2 regularizer on the layer's output): every forward
  /// through a Model adds l1·Σ|y| + l2·Σy² of this layer's output y — summed over the whole batch, as Keras 3
  /// (tf.keras 2 divided it by the batch size) — to the Model's regularization_loss(), which fit and evaluate
  /// add to the loss. std::nullopt (default): none. Config: "activity_regularizer" as Keras writes it.
  /// Errors: ConfigError naming the layer for a negative factor.
  void set_activity_regularizer(std::optional<Regularizer> r);
  const std::optional<Regularizer>& activity_regularizer() const { return activity_regularizer_; }
  /// The activity term of this layer's output `y` (0-dim, float32), undefined without an activity regularizer.
  at::Tensor activity_regularization_loss(const at::Tensor& y) const;

  /// The same forward without the output activation (for numerically stable losses): only layers with
  /// an `activation` override it. Default: forward(x).
  virtual at::Tensor forward_without_activation(const at::Tensor& x) { return forward(x); }
  /// Output activation name ("linear" when the layer has none).
  virtual std::string output_activation() const { return "linear"; }

  /// Keras-style config: {"name": ..., <arguments>}. Shapes inside are in Keras order.
  virtual nlohmann::json config() const = 0;

  /// ONNX export (io/onnx_graph.h; docs/extending.md has an example): append to `graph` the nodes that
  /// compute this (built) layer's output from `inputs` — the ONNX names of its input tensors, float32,
  /// (N, C, H, W) / (N, D) as forward() takes them — and return the output's name. Every built-in layer
  /// writes its own in its source file. The default returns "": no exporter, and saving::export_onnx
  /// fails naming the layer and its class (and no_onnx_export_reason() when the class gives one).
  virtual std::string export_onnx(io::OnnxGraph& graph, const std::vector<std::string>& inputs) const { return {}; }
  /// Why this class has no ONNX form, for a class that has none on purpose ("" = it exports; InputLayer:
  /// a model's inputs are the graph's inputs). Checked by the test that walks every built-in class.
  virtual std::string no_onnx_export_reason() const { return {}; }
  /// Whether this layer's ONNX nodes hold sizes of the input it was built for, so that they would compute
  /// something else at another size (a dynamic export, a layer shared by inputs of different sizes):
  /// saving::export_onnx then refuses such an export naming the layer. Default: "same" padding with a
  /// stride > 1 in config() (TensorFlow's padding then depends on the size). Flatten, Reshape, the
  /// cropping layers, the transposed convolutions, AveragePooling "same", UpSampling3D and the adaptive
  /// pooling layers say true.
  virtual bool onnx_holds_built_size() const;

  /// Keras's layer.set_weights: this built layer's weights from `weights`, in Keras's order and layout
  /// (Conv2D: kernel (k_h, k_w, C_in, F), then bias (F); a Keras 1 file's layout per `options`), copied
  /// into the parameters (converted to their dtype). Errors: ConfigError naming the layer and its class
  /// when it is not built, for a weight count or shape that does not fit, and for a layer with parameters
  /// whose class has no Keras weight layout (with no_keras_weights_reason() when it gives one).
  void set_keras_weights(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options = {});
  /// Keras's layer.get_weights: copies of the weights in Keras 2's order and layout, as set_keras_weights
  /// takes them (set_keras_weights(keras_weights()) changes nothing). Errors: as set_keras_weights.
  std::vector<at::Tensor> keras_weights() const;
  /// Why this class, though it has parameters, has no Keras weight layout ("" = it has one, or needs none).
  virtual std::string no_keras_weights_reason() const { return {}; }

  /// Number of parameters (trainable + non-trainable); 0 before build.
  int64_t count_params() const;
  int64_t trainable_params() const;
  int64_t non_trainable_params() const;

  /// Multiply-add count ×2 for one sample's forward pass (0 for layers without arithmetic worth counting).
  virtual int64_t flops_per_sample() const { return 0; }

 protected:
  /// Creates parameters for `input_shape` and returns the output shape; throw ConfigError on bad shapes.
  virtual Shape build_impl(const Shape& input_shape) = 0;
  /// Multi-input layers: creates parameters for the list of shapes and returns the output shape.
  virtual Shape build_multi_impl(const std::vector<Shape>& input_shapes);
  /// The Keras weight layout of a layer with parameters (set_keras_weights/keras_weights call them on a
  /// built layer): copy `weights` (Keras's order and layout) into the parameters, throwing ConfigError
  /// naming the layer for a count or shape that does not fit; give them back in Keras 2's layout. The
  /// defaults take and give none for a layer without parameters and refuse otherwise.
  virtual void set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options);
  virtual std::vector<at::Tensor> keras_weights_impl() const;
  /// The initial value of Keras weight `weight` (Keras shape `keras_shape`) drawn by `init` (set_initializer):
  /// `init.draw(keras_shape)`. A class whose Keras build composes a weight from its initializer overrides it
  /// (LSTM's unit_forget_bias: the forget gate's quarter of the bias is ones).
  virtual at::Tensor initial_value(const std::string& weight, const Initializer& init,
                                   at::IntArrayRef keras_shape) const;
  /// "layer 'conv2d' (Conv2D)" — for error messages.
  std::string describe() const;
  /// Adds "name", when declared "input_shape", and "trainable" when false to a config.
  nlohmann::json base_config() const;
  /// base_config() plus every argument `options.args()` lists (layer_args.h), in their Keras JSON form.
  template <typename Options>
  nlohmann::json base_config(Options options) const {  // a copy: args() visits the fields non-const
    nlohmann::json config = base_config();
    const bool trainable = config.value("trainable", true);
    LayerArgWriter writer(config);
    options.args(writer);
    // A user layer whose options list "trainable" too: frozen when either says so (set_trainable(false)
    // from a config or the API, or the option), so the config round trip keeps it.
    if (config.contains("trainable")) config["trainable"] = trainable && config["trainable"].get<bool>();
    return config;
  }

 private:
  std::string class_name_;
  std::string name_;
  std::optional<Shape> input_shape_;
  void apply_trainable();

  bool built_ = false;
  bool trainable_ = true;
  int call_count_ = 0;
  std::vector<std::string> trainable_weights_;
  std::map<std::string, Regularizer> regularizers_;  // parameters trainable by nature (set at build)
  std::optional<Regularizer> activity_regularizer_;
  std::map<std::string, Initializer> initializers_;
  void apply_initializers();
  void initialize_weights();
  std::vector<Shape> built_inputs_;
  Shape built_input_;
  Shape built_output_;
  std::map<std::vector<Shape>, Shape> other_shapes_;  // accepted input shapes → output shape
  Shape check_other_shapes(const std::vector<Shape>& input_shapes);
};

/// In a layer class's body: its Keras class name, written once. Declares the public
/// `static constexpr const char keras_class_name[]` ("Conv2D" for TORCHFIT_LAYER_CLASS(Conv2D)), which the
/// constructor passes to Layer and TORCHFIT_REGISTER_LAYER (registry.h) registers the layer under:
///
///   class SwishImpl : public torchfit::Layer {
///     TORCHFIT_LAYER_CLASS(Swish);
///    public:
///     explicit SwishImpl(SwishOptions o = {}) : Layer(keras_class_name, o.name()), options(std::move(o)) {}
///     ...
#define TORCHFIT_LAYER_CLASS(CLASS) \
 public:                            \
  static constexpr const char keras_class_name[] = #CLASS

/// snake_case of a Keras class name: "MaxPooling2D" → "max_pooling2d", "Conv2D" → "conv2d".
std::string keras_snake_case(const std::string& class_name);

/// The snake_case name Keras derives a layer's automatic name and its Keras 3 .weights.h5 key from: that of
/// the Python class (to_snake_case(obj.__class__.__name__)), keras_snake_case(class_name) except for the one
/// exported alias whose class is named otherwise: GroupQueryAttention (class GroupedQueryAttention) →
/// "grouped_query_attention".
std::string keras_name_base(const std::string& class_name);

/// Keras's automatic layer name for `class_name`: the first of conv2d, conv2d_1, conv2d_2, … (an
/// InputLayer: input_1, input_2, …, as tf.keras 2) for which `taken` is false. Used by Sequential::add
/// and Model for every layer without a name.
std::string automatic_layer_name(const std::string& class_name, const std::function<bool(const std::string&)>& taken);

}  // namespace torchfit
