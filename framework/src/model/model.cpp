#include <torchfit/model/model.h>

#include <algorithm>
#include <functional>
#include <ostream>
#include <set>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/runtime/logging.h>

namespace torchfit {
namespace {

bool is_input_node(const Node& node) { return node.inputs.empty(); }

}  // namespace

ModelImpl::ModelImpl(std::string name) : torch::nn::Module("Model"), name_(std::move(name)) {}

ModelImpl::ModelImpl(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs, std::string name)
    : ModelImpl(std::move(name)) {
  set_graph(std::move(inputs), std::move(outputs), /*include_input_layers=*/true);
}

std::string ModelImpl::describe() const { return kind_ + " '" + name_ + "'"; }

void ModelImpl::name_layers(const std::vector<std::shared_ptr<Node>>& order) {
  std::set<std::string> taken;
  for (const auto& n : order) {
    if (!n->layer->name().empty()) taken.insert(n->layer->name());
  }
  for (const auto& n : order) {
    Layer& layer = *n->layer;
    if (!layer.name().empty()) continue;
    const std::string candidate =
        automatic_layer_name(layer.class_name(), [&](const std::string& n) { return taken.count(n) > 0; });
    layer.set_name(candidate);
    taken.insert(candidate);
  }
}

void ModelImpl::set_graph(std::vector<KerasTensor> inputs, std::vector<KerasTensor> outputs,
                          bool include_input_layers) {
  if (inputs.empty() || outputs.empty()) throw ConfigError(describe() + " needs at least one input and one output");
  std::set<const Node*> input_nodes;
  for (const auto& x : inputs) {
    if (!x.defined() || !is_input_node(*x.node())) {
      throw ConfigError(describe() + ": every input must come from Input(), got " +
                        (x.defined() ? "the output of layer '" + x.layer()->name() + "'" : "an empty KerasTensor"));
    }
    if (!input_nodes.insert(x.node().get()).second) {
      throw ConfigError(describe() + ": input '" + x.layer()->name() + "' is given twice");
    }
  }
  // Depth-first from the outputs: post-order is a topological order.
  std::vector<std::shared_ptr<Node>> order;
  std::set<const Node*> done, active, reached_inputs;
  std::function<void(const std::shared_ptr<Node>&, const Node*)> visit = [&](const std::shared_ptr<Node>& n,
                                                                             const Node* consumer) {
    if (done.count(n.get())) return;
    if (is_input_node(*n)) {
      if (!input_nodes.count(n.get())) {
        std::string names;
        for (const auto& x : inputs) names += (names.empty() ? "" : ", ") + x.layer()->name();
        throw ConfigError(describe() + ": graph disconnected: layer '" +
                          (consumer ? consumer->layer->name() : std::string("?")) + "' (" +
                          (consumer ? consumer->layer->class_name() : std::string("?")) + ") reads input '" +
                          n->layer->name() + "' " + format_shape(n->output_shapes[0]) +
                          ", which is not among the model's inputs (" + names + ")");
      }
      reached_inputs.insert(n.get());
      done.insert(n.get());
      return;
    }
    if (!active.insert(n.get()).second) {
      throw ConfigError(describe() + ": the graph has a cycle through layer '" + n->layer->name() + "'");
    }
    for (const auto& x : n->inputs) visit(x.node(), n.get());
    active.erase(n.get());
    done.insert(n.get());
    order.push_back(n);
  };
  for (const auto& y : outputs) {
    if (!y.defined()) throw ConfigError(describe() + ": an output is an empty KerasTensor");
    visit(y.node(), nullptr);
  }
  std::vector<std::shared_ptr<Node>> all;
  for (const auto& x : inputs) all.push_back(x.node());
  all.insert(all.end(), order.begin(), order.end());
  name_layers(all);
  for (const auto& x : inputs) {
    if (!reached_inputs.count(x.node().get())) {
      throw ConfigError(describe() + ": input '" + x.layer()->name() + "' " + format_shape(x.shape()) +
                        " is not used by any output");
    }
  }
  // Unique layers, one name each.
  std::vector<std::shared_ptr<Layer>> layers;
  std::map<std::string, const Layer*> by_name;
  for (const auto& n : all) {
    const auto& l = n->layer;
    auto [it, fresh] = by_name.emplace(l->name(), l.get());
    if (!fresh && it->second != l.get()) {
      throw ConfigError(describe() + ": two different layers are named '" + l->name() +
                        "'; layer names must be unique in a model");
    }
    if (fresh && (include_input_layers || !is_input_node(*n))) layers.push_back(l);
  }
  for (const auto& l : layers) {
    if (!named_children().contains(l->name())) register_module(l->name(), l);
  }
  inputs_ = std::move(inputs);
  outputs_ = std::move(outputs);
  nodes_ = std::move(order);
  layers_ = std::move(layers);
  slot_.clear();
  local_index_.clear();
  std::map<const Layer*, int> calls;
  for (const auto& n : all) {
    slot_[n.get()] = slot_.size();
    local_index_[n.get()] = calls[n->layer.get()]++;
  }
  plan();
}

void ModelImpl::plan() {
  steps_.clear();
  uses_.assign(slot_.size(), 0);
  std::set<const Node*> outputs;
  for (const auto& y : outputs_) outputs.insert(y.node().get());
  for (const auto& n : nodes_) {
    Step s;
    s.node = n;
    s.out = slot_.at(n.get());
    s.output = outputs.count(n.get()) > 0;
    for (const auto& x : n->inputs) {
      s.in.push_back(slot_.at(x.node().get()));
      ++uses_[s.in.back()];
    }
    steps_.push_back(std::move(s));
  }
  for (auto& s : steps_) s.consumed = uses_[s.out] > 0;
  carries_masks_ = std::any_of(nodes_.begin(), nodes_.end(), [](const auto& n) { return n->layer->makes_mask(); });
  for (const auto& y : outputs_) uses_[slot_.at(y.node().get())] = -1;  // never freed
  for (size_t i = 0; pool_before_relu_ && i + 1 < steps_.size(); ++i) {
    const Step& a = steps_[i];
    const Step& b = steps_[i + 1];
    steps_[i].fuse_pool = !a.output && uses_[a.out] == 1 && a.node->inputs.size() == 1 &&
                          !a.node->layer->takes_list() && a.node->layer->output_activation() == "relu" &&
                          b.in.size() == 1 && b.in[0] == a.out &&
                          dynamic_cast<const MaxPooling2DImpl*>(b.node->layer.get()) != nullptr;
    if (steps_[i].fuse_pool) ++i;
  }
}

std::vector<std::shared_ptr<Node>> ModelImpl::masked_consumers() const {
  std::set<const Node*> masked;  // nodes whose output may carry a mask
  std::vector<std::shared_ptr<Node>> consumers;
  for (const auto& n : nodes_) {
    const bool in = std::any_of(n->inputs.begin(), n->inputs.end(),
                                [&](const KerasTensor& x) { return masked.count(x.node().get()) > 0; });
    if (in && n->layer->uses_mask()) consumers.push_back(n);
    if (n->layer->makes_mask() || (in && n->layer->supports_masking())) masked.insert(n.get());
  }
  return consumers;
}

int ModelImpl::local_node_index(const Node* node) const {
  auto it = local_index_.find(node);
  return it == local_index_.end() ? 0 : it->second;
}

bool ModelImpl::is_chain() const {
  if (inputs_.size() != 1 || outputs_.size() != 1) return false;
  const Node* prev = inputs_[0].node().get();
  for (const auto& n : nodes_) {
    if (n->inputs.size() != 1 || n->inputs[0].node().get() != prev) return false;
    prev = n.get();
  }
  return prev == outputs_[0].node().get();
}

void ModelImpl::set_memory_format(const std::string& name) {
  if (name != "auto" && name != "channels_last" && name != "contiguous")
    throw ConfigError("memory_format must be auto, channels_last or contiguous, got \"" + name + "\"");
  memory_format_ = name;
}

bool ModelImpl::uses_channels_last(const c10::Device& device) const {
  return memory_format_ == "channels_last" || (memory_format_ == "auto" && device.is_cpu());
}

std::vector<int64_t> ModelImpl::unknown_input_axes(size_t i) const {
  const auto input = std::dynamic_pointer_cast<InputLayerImpl>(inputs_.at(i).layer());
  return input ? input->options.unknown_axes() : std::vector<int64_t>{};
}

namespace {
// The layer nearest above `node` whose output has no spatial axes but changes with the image size (a
// Flatten, a Reshape): what makes a later layer depend on the input size.
const Node* size_dependent_vector(const Node* node, const std::map<const Node*, Shape>& shapes) {
  for (const auto& x : node->inputs) {
    const Node* up = x.node().get();
    auto it = shapes.find(up);
    if (it == shapes.end() || up->inputs.empty()) continue;
    if (it->second.size() < 3 && it->second != up->output_shapes[0]) return up;
    if (const Node* above = size_dependent_vector(up, shapes)) return above;
  }
  return nullptr;
}
}  // namespace

std::map<const Node*, Shape> ModelImpl::shapes_for(const std::vector<Shape>& input_shapes) {
  if (input_shapes.size() != inputs_.size()) {
    throw ConfigError(describe() + " takes " + std::to_string(inputs_.size()) + " input shape(s), got " +
                      std::to_string(input_shapes.size()));
  }
  std::map<const Node*, Shape> shapes;
  for (size_t i = 0; i < inputs_.size(); ++i) shapes[inputs_[i].node().get()] = input_shapes[i];
  for (const auto& n : nodes_) {
    std::vector<Shape> in;
    for (const auto& x : n->inputs) in.push_back(shapes.at(x.node().get()));
    try {
      shapes[n.get()] = n->layer->output_shape_for(in);
    } catch (const ConfigError& e) {
      const Node* cause = size_dependent_vector(n.get(), shapes);
      throw ConfigError(describe() + " cannot take an input of shape " + format_shape(input_shapes[0]) + ": " +
                        e.what() +
                        (cause ? " (its input follows the image size through layer '" + cause->layer->name() + "' (" +
                                     cause->layer->class_name() + ")" + ", which needs a fixed input size)"
                               : std::string()));
    }
  }
  return shapes;
}

void ModelImpl::check_input_sizes(const std::vector<at::Tensor>& xs) {
  std::vector<Shape> shapes;
  bool other = false;
  for (size_t i = 0; i < xs.size(); ++i) {
    Shape s = inputs_[i].shape();
    const auto axes = unknown_input_axes(i);
    if (axes.empty() || xs[i].dim() != 4 || s.size() != 3) return;         // prepare_input checks the rest
    for (int64_t a : axes) s[static_cast<size_t>(a)] = xs[i].size(2 + a);  // (N, C, H, W): H, W at 2, 3
    other = other || s != inputs_[i].shape();
    shapes.push_back(std::move(s));
  }
  if (!other || checked_shapes_.count(shapes)) return;
  shapes_for(shapes);
  checked_shapes_.insert(shapes);
}

at::Tensor ModelImpl::prepare_input(const at::Tensor& x, size_t i) const {
  const Shape& keras = inputs_[i].shape();
  Shape expected = to_tensor_shape(keras);
  const auto got = x.sizes();
  const auto unknown = unknown_input_axes(i);
  if (keras.size() == 3 && x.dim() == 4) {
    for (int64_t a : unknown) expected[static_cast<size_t>(1 + a)] = got[static_cast<size_t>(2 + a)];  // (C, H, W)
  }
  if (static_cast<size_t>(x.dim()) != expected.size() + 1 ||
      !std::equal(expected.begin(), expected.end(), got.begin() + 1)) {
    std::string tensor = "(N";
    for (int64_t e : expected) tensor += ", " + std::to_string(e);
    throw ConfigError(describe() + ": an input tensor of shape " + format_sizes(got.vec()) +
                      " does not fit the model's input_shape " + format_shape(keras) + ", which takes tensors " +
                      tensor + ")" + (keras.size() == 3 ? " (N, C, H, W)" : ""));
  }
  const bool channels_last = x.dim() == 4 && uses_channels_last(x.device());
  // A mixed policy: the layers take their input in the compute dtype (Keras casts a layer's floating
  // inputs); one pass converts layout and dtype together.
  const bool cast = dtype_policy_.is_mixed() && at::isFloatingType(x.scalar_type());
  if (!cast) return channels_last ? x.contiguous(at::MemoryFormat::ChannelsLast) : x;
  return x.to(dtype_policy_.compute_dtype(), /*non_blocking=*/false, /*copy=*/false,
              channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Preserve);
}

// One node's output: its layer's forward (without the output activation for a model output under
// `logits`), given its inputs' masks when the graph carries them; its output's mask into `masks`.
at::Tensor ModelImpl::run_step(const Step& s, const std::vector<at::Tensor>& values, std::vector<at::Tensor>& masks,
                               bool logits) {
  Layer& layer = *s.node->layer;
  const bool single = s.in.size() == 1 && !layer.takes_list();
  std::vector<at::Tensor> xs, ms;
  bool masked = false;
  for (size_t k : s.in) {
    xs.push_back(values[k]);
    if (carries_masks_) ms.push_back(masks[k]);
    masked = masked || (carries_masks_ && masks[k].defined());
  }
  // A layer whose values use masks has a linear output (the recurrent and attention layers, pooling,
  // Masking); one with an activation (Dense, Activation) computes without them.
  const bool without_activation = s.output && logits && layer.output_activation() != "linear";
  at::Tensor y = without_activation ? (single ? layer.forward_without_activation(xs[0]) : layer.forward_multi(xs))
                 : masked           ? layer.forward_masked(xs, ms)
                 : single           ? layer.forward(xs[0])
                                    : layer.forward_multi(xs);
  if (masked || (carries_masks_ && layer.makes_mask())) {
    masks[s.out] = layer.compute_mask(xs, ms);
    if (masked && !layer.supports_masking() && mask_warned_.insert(layer.name()).second) {
      torchfit::logger().warn(
          "layer '{}' ({}) was passed an input with a mask but does not support masking: the layers after "
          "it do not see the mask (as Keras)",
          layer.name(), layer.class_name());
    }
  }
  return y;
}

void ModelImpl::run_steps(std::vector<at::Tensor>& values, bool logits) {
  std::vector<int> uses = uses_;
  std::vector<at::Tensor> masks(carries_masks_ ? values.size() : 0);
  auto release = [&](const Step& s) {
    for (size_t slot : s.in) {
      if (uses[slot] > 0 && --uses[slot] == 0) values[slot].reset();
    }
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    Layer& layer = *s.node->layer;
    if (s.fuse_pool && !layer.activity_regularizer() && !steps_[i + 1].node->layer->activity_regularizer()) {
      // max(relu(a), relu(b), …) = relu(max(a, b, …)) and the gradient reaches the same element, so the
      // ReLU and its backward run on the pooled tensor (4× smaller for 2×2 pooling).
      const Step& pool = steps_[i + 1];
      auto* max_pool = dynamic_cast<MaxPooling2DImpl*>(pool.node->layer.get());  // fuse_pool checked it
      values[pool.out] = max_pool->forward_then_relu(layer.forward_without_activation(values[s.in[0]]));
      release(s);
      ++i;
      continue;
    }
    // Nodes reading an output get it activated, as forward() gives it.
    if (s.output && logits && s.consumed)
      throw ConfigError(describe() + ": output layer '" + layer.name() +
                        "' also feeds other layers; run forward() instead of forward_logits()");
    values[s.out] = run_step(s, values, masks, logits);
    if (layer.activity_regularizer()) {  // on the activated output, as Keras's layer.__call__
      const at::Tensor y =
          s.output && logits ? apply_activation(layer.output_activation(), values[s.out]) : values[s.out];
      const at::Tensor term = layer.activity_regularization_loss(y);
      activity_loss_ = activity_loss_.defined() ? activity_loss_ + term : term;
    }
    release(s);
  }
  output_masks_.assign(outputs_.size(), at::Tensor());
  for (size_t i = 0; carries_masks_ && i < outputs_.size(); ++i)
    output_masks_[i] = masks[slot_.at(outputs_[i].node().get())];
}

std::vector<at::Tensor> ModelImpl::run(const std::vector<at::Tensor>& xs, bool logits) {
  if (xs.size() != inputs_.size()) {
    throw ConfigError(describe() + " takes " + std::to_string(inputs_.size()) + " input tensor(s), got " +
                      std::to_string(xs.size()));
  }
  check_input_sizes(xs);
  const bool mixed = dtype_policy_.is_mixed();
  std::vector<at::Tensor> values(slot_.size());
  activity_loss_ = at::Tensor();
  {
    mixed_precision::AutocastScope autocast(dtype_policy_, xs.empty() ? c10::Device(c10::kCPU) : xs[0].device());
    for (size_t i = 0; i < xs.size(); ++i) values[slot_.at(inputs_[i].node().get())] = prepare_input(xs[i], i);
    run_steps(values, logits || mixed);
  }
  std::vector<at::Tensor> out;
  for (const auto& y : outputs_) {
    at::Tensor h = values[slot_.at(y.node().get())];
    if (mixed) {
      // Keras's mixed-precision rule: the output activation (softmax/sigmoid) and the loss in float32.
      h = h.to(at::kFloat);
      if (!logits && !is_input_node(*y.node())) h = apply_activation(y.layer()->output_activation(), h);
    }
    out.push_back(h.dim() == 4 ? h.contiguous() : h);
  }
  return out;
}

std::vector<at::Tensor> ModelImpl::forward_multi(const std::vector<at::Tensor>& xs, bool logits) {
  return run(xs, logits);
}

at::Tensor ModelImpl::forward(const at::Tensor& x) {
  if (inputs_.size() != 1 || outputs_.size() != 1) {
    throw ConfigError(describe() + " has " + std::to_string(inputs_.size()) + " inputs and " +
                      std::to_string(outputs_.size()) + " outputs: use forward_multi");
  }
  return run({x}, false)[0];
}

at::Tensor ModelImpl::forward_logits(const at::Tensor& x) {
  if (inputs_.size() != 1 || outputs_.size() != 1) {
    throw ConfigError(describe() + " has several inputs or outputs: use forward_multi(xs, /*logits=*/true)");
  }
  return run({x}, true)[0];
}

std::vector<std::string> ModelImpl::input_names() const {
  std::vector<std::string> names;
  for (const auto& t : inputs_) names.push_back(t.layer()->name());
  return names;
}

std::vector<std::string> ModelImpl::output_names() const {
  std::vector<std::string> names;
  for (const auto& t : outputs_) names.push_back(t.layer()->name());
  return names;
}

std::string ModelImpl::output_activation() const {
  if (outputs_.size() != 1 || is_input_node(*outputs_[0].node())) return "linear";
  return outputs_[0].layer()->output_activation();
}

std::shared_ptr<Layer> ModelImpl::get_layer(const std::string& name) const {
  std::string known;
  for (const auto& l : layers_) {
    if (l->name() == name) return l;
    known += (known.empty() ? "" : ", ") + l->name();
  }
  throw ConfigError("no layer named '" + name + "' in " + describe() + " (layers: " + known + ")");
}

void ModelImpl::reorder_layers(const std::vector<std::string>& names) {
  std::vector<std::shared_ptr<Layer>> ordered;
  for (const auto& n : names) {
    for (const auto& l : layers_) {
      if (l->name() == n) ordered.push_back(l);
    }
  }
  if (ordered.size() == layers_.size()) layers_ = std::move(ordered);
}

const Shape& ModelImpl::input_shape() const {
  if (inputs_.size() != 1) {
    throw ConfigError(describe() + (inputs_.empty() ? " has no layers" : " has several inputs"));
  }
  return inputs_[0].shape();
}

const Shape& ModelImpl::output_shape() const {
  if (outputs_.size() != 1) {
    throw ConfigError(describe() + (outputs_.empty() ? " has no layers" : " has several outputs"));
  }
  return outputs_[0].shape();
}

at::Tensor ModelImpl::regularization_loss() const {
  at::Tensor total = activity_loss_;
  for (const auto& l : layers_) {
    at::Tensor r = l->regularization_loss();
    if (r.defined()) total = total.defined() ? total + r : r;
    for (const auto& m : l->modules(/*include_self=*/false)) {  // a wrapper's layers (Bidirectional's, …)
      const auto* inner = dynamic_cast<const Layer*>(m.get());
      at::Tensor ri = inner ? inner->regularization_loss() : at::Tensor();
      if (ri.defined()) total = total.defined() ? total + ri : ri;
    }
  }
  return total;
}

int64_t ModelImpl::count_params() const { return trainable_params() + non_trainable_params(); }
int64_t ModelImpl::trainable_params() const {
  int64_t n = 0;
  for (const auto& l : layers_) n += l->trainable_params();
  return n;
}
int64_t ModelImpl::non_trainable_params() const {
  int64_t n = 0;
  for (const auto& l : layers_) n += l->non_trainable_params();
  return n;
}
int64_t ModelImpl::flops_per_sample() const {
  int64_t n = 0;
  for (const auto& node : nodes_) n += node->layer->flops_per_sample();
  return n;
}

int64_t ModelImpl::train_flops_per_sample() const {
  int64_t first = 0;
  for (const auto& node : nodes_) {
    const bool reads_input = std::all_of(node->inputs.begin(), node->inputs.end(),
                                         [](const KerasTensor& x) { return is_input_node(*x.node()); });
    if (reads_input) first += node->layer->flops_per_sample();
  }
  return 3 * flops_per_sample() - first;
}

std::string ModelImpl::summary(int line_length) const { return functional_summary(line_length > 0 ? line_length : 98); }

void ModelImpl::print_summary(std::ostream& os) const { os << summary(); }

std::shared_ptr<Node> class_scores_node(const ModelImpl& model) {
  if (model.outputs().size() != 1) return nullptr;
  std::shared_ptr<Node> node = model.outputs()[0].node();
  for (;;) {
    const std::string cls = node->layer->class_name();
    if (cls == "Dense") return node->inputs.size() == 1 ? node : nullptr;
    if ((cls != "Activation" && cls != "Softmax" && cls != "Dropout") || node->inputs.size() != 1) return nullptr;
    node = node->inputs[0].node();
  }
}

namespace {
// The Dense that computes a single-input single-output model's classification scores, or an error saying why not.
std::shared_ptr<Node> head_dense_node(const ModelImpl& model) {
  if (model.inputs().size() != 1 || model.outputs().size() != 1) {
    throw ConfigError("a new classification head needs a model with one input and one output ('" + model.model_name() +
                      "' has " + std::to_string(model.inputs().size()) + " and " +
                      std::to_string(model.outputs().size()) + ")");
  }
  std::shared_ptr<Node> node = class_scores_node(model);
  if (!node) {
    const auto& out = model.outputs()[0].layer();
    throw ConfigError("cannot replace the classification head of '" + model.model_name() + "': its output layer '" +
                      out->name() + "' (" + out->class_name() +
                      ") is not a Dense layer (or an Activation/Softmax after one)");
  }
  return node;
}
}  // namespace

Model with_new_head(const Model& base, int64_t classes, const std::string& name) {
  if (classes < 1) throw ConfigError("a new classification head needs classes >= 1, got " + std::to_string(classes));
  const std::shared_ptr<Node> head = head_dense_node(*base);
  for (const auto& l : base->layers()) {
    if (l->name() == name) throw ConfigError("the new head's name '" + name + "' is taken by a layer of the model");
  }
  Dense dense(DenseOptions(classes).activation("softmax").name(name));
  KerasTensor out = dense->call(head->inputs[0]);
  return Model(base->inputs(), {out}, base->model_name());
}

int freeze_all_but_head(ModelImpl& model) {
  if (model.outputs().size() != 1) throw ConfigError("freezing the base needs a model with one output");
  const Layer* head = model.outputs()[0].layer().get();
  int frozen = 0;
  for (const auto& l : model.layers()) {
    if (l.get() == head || l->class_name() == "InputLayer") continue;
    l->set_trainable(false);
    ++frozen;
  }
  return frozen;
}

}  // namespace torchfit
