#include <torchfit/layers/layer.h>

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <new>
#include <sstream>

#include <c10/util/Exception.h>

#include <torchfit/layers/registry.h>
#include "layers/layer_export.h"

namespace torchfit {

Layer::Layer(std::string class_name, std::string name)
    : torch::nn::Module(class_name), class_name_(std::move(class_name)), name_(std::move(name)) {}

namespace {
// A shape's values per sample beyond int32 indexing (2^31 − 1) are refused before anything allocates them:
// LibTorch would fail later with a bare allocation or indexing error (Resizing(100000, 100000)).
void check_output_size(const std::string& who, const Shape& out) {
  double values = 1;
  for (int64_t d : out) values *= static_cast<double>(d);
  if (values > 2147483647.0) {
    std::ostringstream text;
    text << std::setprecision(3) << who << ": its output " << format_shape(out) << " holds " << values
         << " values per sample (" << values * 4 / 1e9 << " GB in float32), more than 2^31 - 1: too large";
    throw ConfigError(text.str());
  }
}

// Builds through `fn`, turning LibTorch's allocation failure (weights too large for memory) into a
// ConfigError naming the layer.
template <typename Fn>
Shape guarded_build(const std::string& who, Fn fn) {
  Shape out;
  try {
    out = fn();
  } catch (const std::bad_alloc&) {
    throw ConfigError(who + ": cannot allocate its weights (out of memory)");
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (what.find("alloc") == std::string::npos) throw;
    throw ConfigError(who + ": cannot allocate its weights: " + what.substr(0, what.find('\n')));
  }
  check_output_size(who, out);
  return out;
}
}  // namespace

Shape Layer::build(const Shape& input_shape) {
  if (takes_list()) {
    throw ConfigError(describe() + " takes a list of inputs (build_multi / call({a, b})), got one input " +
                      format_shape(input_shape));
  }
  if (built_) return output_shape_for({input_shape});
  for (auto d : input_shape) {
    if (d <= 0) throw ConfigError(describe() + ": invalid input shape " + format_shape(input_shape));
  }
  built_output_ = guarded_build(describe(), [&] { return build_impl(input_shape); });
  built_input_ = input_shape;
  built_inputs_ = {input_shape};
  built_ = true;
  initialize_weights();
  apply_trainable();
  return built_output_;
}

namespace {
std::string shapes_text(const std::vector<Shape>& shapes) { return "[" + format_shapes(shapes) + "]"; }
}  // namespace

Shape Layer::build_multi(const std::vector<Shape>& input_shapes) {
  if (!takes_list()) {
    if (input_shapes.size() != 1) {
      throw ConfigError(describe() + " takes one input, got " + std::to_string(input_shapes.size()) + ": " +
                        shapes_text(input_shapes));
    }
    return build(input_shapes[0]);
  }
  if (built_) return output_shape_for(input_shapes);
  for (const auto& s : input_shapes) {
    for (auto d : s) {
      if (d <= 0) throw ConfigError(describe() + ": invalid input shape " + format_shape(s));
    }
  }
  built_output_ = guarded_build(describe(), [&] { return build_multi_impl(input_shapes); });
  built_inputs_ = input_shapes;
  built_input_ = input_shapes.empty() ? Shape{} : input_shapes[0];
  built_ = true;
  initialize_weights();
  apply_trainable();
  return built_output_;
}

Shape Layer::output_shape_for(const std::vector<Shape>& input_shapes) {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  if (input_shapes == built_inputs_) return built_output_;
  auto known = other_shapes_.find(input_shapes);
  if (known != other_shapes_.end()) return known->second;
  Shape out = check_other_shapes(input_shapes);
  other_shapes_.emplace(input_shapes, out);
  return out;
}

namespace {
// name → sizes of a module's parameters and buffers (what a build creates).
std::map<std::string, std::vector<int64_t>> weight_shapes(const torch::nn::Module& m) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& p : m.named_parameters(true)) shapes[p.key()] = p.value().sizes().vec();
  for (const auto& b : m.named_buffers(true)) shapes[b.key()] = b.value().sizes().vec();
  return shapes;
}

std::string sizes_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + (s.size() == 1 ? ",)" : ")");
}
}  // namespace

// A copy built from config() for the other shapes: its weights' shapes must be ours (Keras reuses the
// same variables; a layer whose weights do not depend on the spatial size accepts every such shape).
Shape Layer::check_other_shapes(const std::vector<Shape>& input_shapes) {
  const bool one = !takes_list() && input_shapes.size() == 1;
  const std::string built = one ? "input " + format_shape(built_input_) : "inputs " + shapes_text(built_inputs_);
  const std::string other = one ? format_shape(input_shapes[0]) : shapes_text(input_shapes);
  const std::string refused = describe() + " was built for " + built + " and cannot be rebuilt for " + other;
  std::shared_ptr<Layer> copy;
  try {
    copy = layer_from_json(layer_to_json(*this));
  } catch (const std::exception& e) {
    throw ConfigError(refused + " (its class cannot be rebuilt from its config to check its weights: " + e.what() +
                      ")");
  }
  Shape out;
  try {
    out = one ? copy->build(input_shapes[0]) : copy->build_multi(input_shapes);
  } catch (const ConfigError& e) {
    throw ConfigError(refused + ": " + e.what());
  }
  const auto mine = weight_shapes(*this), theirs = weight_shapes(*copy);
  for (const auto& [name, sizes] : mine) {
    auto it = theirs.find(name);
    if (it == theirs.end() || it->second != sizes) {
      throw ConfigError(refused + ": its weight '" + name + "' is " + sizes_text(sizes) + " and would be " +
                        (it == theirs.end() ? std::string("absent") : sizes_text(it->second)) + " for that input");
    }
  }
  if (theirs.size() != mine.size()) throw ConfigError(refused + ": it would have other weights for that input");
  return out;
}

Shape Layer::build_multi_impl(const std::vector<Shape>& input_shapes) {
  throw ConfigError(describe() + " does not take a list of inputs, got " + shapes_text(input_shapes));
}

at::Tensor Layer::forward_multi(const std::vector<at::Tensor>& xs) {
  if (xs.size() != 1) {
    throw ConfigError(describe() + " takes one input tensor, got " + std::to_string(xs.size()));
  }
  return forward(xs[0]);
}

at::Tensor Layer::compute_mask(const std::vector<at::Tensor>&, const std::vector<at::Tensor>& masks) const {
  return supports_masking() && !masks.empty() ? masks[0] : at::Tensor();
}

at::Tensor Layer::forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>&) {
  return inputs.size() == 1 && !takes_list() ? forward(inputs[0]) : forward_multi(inputs);
}

KerasTensor Layer::call(const KerasTensor& x) { return call(std::vector<KerasTensor>{x}); }

KerasTensor Layer::call(const std::vector<KerasTensor>& xs) {
  std::vector<Shape> shapes;
  for (const auto& x : xs) {
    if (!x.defined()) throw ConfigError(describe() + ": called on an empty KerasTensor");
    shapes.push_back(x.shape());
  }
  auto self = std::dynamic_pointer_cast<Layer>(shared_from_this());
  Shape out = (takes_list() || shapes.size() != 1) ? build_multi(shapes) : build(shapes[0]);
  auto node = std::make_shared<Node>();
  node->layer = std::move(self);
  node->inputs = xs;
  node->output_shapes = {out};
  node->node_index = call_count_++;
  return KerasTensor(std::move(node), 0, std::move(out));
}

void Layer::set_regularizer(const std::string& weight, Regularizer r) {
  if (!(r.l1 >= 0.0) || !(r.l2 >= 0.0)) {
    throw ConfigError(describe() + ": regularizer factors of '" + weight + "' must be >= 0");
  }
  regularizers_[weight] = r;
}

// The layer's own parameter `weight`, or, for a layer made of sublayers (MultiHeadAttention's projections),
// the parameter of that name of each sublayer (Keras passes a composite layer's regularizers to each).
namespace {
std::vector<at::Tensor> regularized_weights(const Layer& layer, const std::string& weight) {
  if (const auto* w = layer.named_parameters(/*recurse=*/false).find(weight)) return {*w};
  std::vector<at::Tensor> out;
  for (const auto& child : layer.children()) {
    const auto* sub = dynamic_cast<const Layer*>(child.get());
    if (!sub) continue;
    if (const auto* w = sub->named_parameters(/*recurse=*/false).find(weight)) out.push_back(*w);
  }
  return out;
}
}  // namespace

at::Tensor Layer::regularization_loss() const {
  at::Tensor total;
  if (regularizers_.empty() || !built_) return total;
  for (const auto& [weight, r] : regularizers_) {
    const std::vector<at::Tensor> ws = regularized_weights(*this, weight);
    if (ws.empty()) throw ConfigError(describe() + " has no weight '" + weight + "' to regularize");
    for (const at::Tensor& w : ws) {
      at::Tensor term = at::zeros({}, w.options());
      if (r.l1 != 0.0) term = term + r.l1 * w.abs().sum();
      if (r.l2 != 0.0) term = term + r.l2 * w.square().sum();
      total = total.defined() ? total + term : term;
    }
  }
  return total;
}

void Layer::set_activity_regularizer(std::optional<Regularizer> r) {
  if (r && (!(r->l1 >= 0.0) || !(r->l2 >= 0.0))) {
    throw ConfigError(describe() + ": activity regularizer factors must be >= 0");
  }
  activity_regularizer_ = r;
}

at::Tensor Layer::activity_regularization_loss(const at::Tensor& y) const {
  if (!activity_regularizer_) return {};
  const at::Tensor v = y.to(at::kFloat);
  at::Tensor term = at::zeros({}, v.options());
  if (activity_regularizer_->l1 != 0.0) term = term + activity_regularizer_->l1 * v.abs().sum();
  if (activity_regularizer_->l2 != 0.0) term = term + activity_regularizer_->l2 * v.square().sum();
  return term;
}

void Layer::set_initializer(const std::string& weight, Initializer init) {
  if (built_) throw ConfigError(describe() + ": set the initializer of '" + weight + "' before the layer is built");
  initializers_[weight] = std::move(init);
}

std::vector<std::string> Layer::keras_weight_names() const {
  static const std::vector<std::string> keras_order = {"embeddings",
                                                       "depthwise_kernel",
                                                       "kernel",
                                                       "pointwise_kernel",
                                                       "recurrent_kernel",
                                                       "bias",
                                                       "gamma",
                                                       "beta",
                                                       "moving_mean",
                                                       "moving_variance",
                                                       "alpha",
                                                       "scale",
                                                       "mean",
                                                       "variance",
                                                       "count"};
  std::vector<std::string> own;
  for (const auto& p : named_parameters(/*recurse=*/false)) own.push_back(p.key());
  for (const auto& b : named_buffers(/*recurse=*/false)) own.push_back(b.key());
  std::vector<std::string> names;
  for (const auto& k : keras_order) {
    if (std::find(own.begin(), own.end(), k) != own.end()) names.push_back(k);
  }
  for (const auto& k : own) {
    if (std::find(keras_order.begin(), keras_order.end(), k) == keras_order.end()) names.push_back(k);
  }
  return names;
}

at::Tensor Layer::initial_value(const std::string& weight, const Initializer& init, at::IntArrayRef shape) const {
  return init.draw(shape, describe() + ": " + initializer_config_key(weight));
}

// apply_initializers on the just-built layer; a failure leaves it unbuilt, as a failed build_impl does.
void Layer::initialize_weights() {
  try {
    apply_initializers();
  } catch (...) {
    built_ = false;
    throw;
  }
}

// Draws each weight that has an initializer in its Keras shape and sets it through the Keras layout.
void Layer::apply_initializers() {
  if (initializers_.empty()) return;
  const std::vector<std::string> names = keras_weight_names();
  bool any = false;
  for (const auto& [weight, init] : initializers_) {
    any = any || std::find(names.begin(), names.end(), weight) != names.end();
  }
  if (!any) return;
  if (!no_keras_weights_reason().empty()) {
    throw ConfigError(describe() +
                      ": cannot apply its initializers, it has no Keras weight layout: " + no_keras_weights_reason());
  }
  std::vector<at::Tensor> weights = keras_weights_impl();
  if (weights.size() != names.size()) {
    throw ConfigError(describe() + ": cannot apply its initializers: " + std::to_string(names.size()) +
                      " weight names for " + std::to_string(weights.size()) +
                      " Keras weights (its class overrides Layer::keras_weight_names)");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    auto it = initializers_.find(names[i]);
    if (it == initializers_.end()) continue;
    const at::Tensor w = initial_value(names[i], it->second, weights[i].sizes());
    weights[i] = w.to(weights[i].dtype());
  }
  set_keras_weights_impl(weights, {});
}

void Layer::set_trainable(bool trainable) {
  trainable_ = trainable;
  apply_trainable();
}

void Layer::apply_trainable() {
  if (!built_) return;
  if (trainable_weights_.empty()) {
    for (const auto& p : named_parameters(/*recurse=*/true)) {
      if (p.value().requires_grad()) trainable_weights_.push_back(p.key());
    }
  }
  auto params = named_parameters(true);
  for (const auto& key : trainable_weights_) {
    if (auto* p = params.find(key)) p->set_requires_grad(trainable_);
  }
}

const std::vector<Shape>& Layer::input_shapes() const {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  return built_inputs_;
}

const Shape& Layer::input_shape() const {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  return built_input_;
}

const Shape& Layer::output_shape() const {
  if (!built_) throw ConfigError(describe() + " is not built yet");
  return built_output_;
}

int64_t Layer::trainable_params() const {
  int64_t n = 0;
  for (const auto& p : parameters(/*recurse=*/true)) {
    if (p.requires_grad()) n += p.numel();
  }
  return n;
}

int64_t Layer::non_trainable_params() const {
  int64_t n = 0;
  for (const auto& p : parameters(true)) {
    if (!p.requires_grad()) n += p.numel();
  }
  for (const auto& b : buffers(true)) n += b.numel();
  return n;
}

int64_t Layer::count_params() const { return trainable_params() + non_trainable_params(); }

std::string Layer::describe() const {
  return "layer '" + (name_.empty() ? keras_name_base(class_name_) : name_) + "' (" + class_name_ + ")";
}

nlohmann::json Layer::base_config() const {
  nlohmann::json c;
  c["name"] = name_;
  if (input_shape_) c["input_shape"] = *input_shape_;
  if (!trainable_) c["trainable"] = false;
  auto regularizer_json = [](const Regularizer& r) -> nlohmann::json {
    if (r.l1 == 0.0) return {{"class_name", "L2"}, {"config", {{"l2", r.l2}}}};
    if (r.l2 == 0.0) return {{"class_name", "L1"}, {"config", {{"l1", r.l1}}}};
    return {{"class_name", "L1L2"}, {"config", {{"l1", r.l1}, {"l2", r.l2}}}};
  };
  for (const auto& [weight, r] : regularizers_) {
    const bool short_name = weight == "depthwise_kernel" || weight == "recurrent_kernel";  // Keras's keys
    const std::string key = (short_name ? weight.substr(0, weight.size() - 7) : weight) + "_regularizer";
    c[key] = regularizer_json(r);
  }
  if (activity_regularizer_) c["activity_regularizer"] = regularizer_json(*activity_regularizer_);
  for (const auto& [weight, init] : initializers_) c[initializer_config_key(weight)] = init.to_json();
  return c;
}

std::string automatic_layer_name(const std::string& class_name, const std::function<bool(const std::string&)>& taken) {
  const bool input = class_name == "InputLayer";
  const std::string base = input ? "input" : keras_name_base(class_name);
  int count = input ? 1 : 0;
  std::string candidate = input ? base + "_1" : base;
  while (taken(candidate)) candidate = base + "_" + std::to_string(++count);
  return candidate;
}

std::string keras_name_base(const std::string& class_name) {
  return class_name == "GroupQueryAttention" ? "grouped_query_attention" : keras_snake_case(class_name);
}

std::string keras_snake_case(const std::string& s) {
  // As Keras's generic_utils.to_snake_case: insert '_' before an upper-case letter that follows a
  // lower-case letter or digit... Keras: re.sub('(.)([A-Z][a-z]+)', r'\1_\2') then
  // re.sub('([a-z])([A-Z])', r'\1_\2') and lower(). "MaxPooling2D" → "max_pooling2d".
  std::string a;
  for (size_t i = 0; i < s.size(); ++i) {
    // step 1: (.)([A-Z][a-z]+)
    if (i > 0 && std::isupper(static_cast<unsigned char>(s[i])) && i + 1 < s.size() &&
        std::islower(static_cast<unsigned char>(s[i + 1]))) {
      a += '_';
    }
    a += s[i];
  }
  std::string b;
  for (size_t i = 0; i < a.size(); ++i) {
    if (i > 0 && std::islower(static_cast<unsigned char>(a[i - 1])) && std::isupper(static_cast<unsigned char>(a[i]))) {
      b += '_';
    }
    b += static_cast<char>(std::tolower(static_cast<unsigned char>(a[i])));
  }
  return b;
}

}  // namespace torchfit

namespace torchfit {

const std::shared_ptr<Layer>& KerasTensor::layer() const {
  static const std::shared_ptr<Layer> none;
  return node_ ? node_->layer : none;
}

int KerasTensor::node_index() const { return node_ ? node_->node_index : 0; }

std::string KerasTensor::describe() const {
  if (!node_) return "<empty KerasTensor>";
  return node_->layer->name() + "[" + std::to_string(node_->node_index) + "][" + std::to_string(tensor_index_) + "]";
}

}  // namespace torchfit

// Keras weights and the helpers layers share for them and for their ONNX export (layers/layer_export.h).
namespace torchfit {

void Layer::set_keras_weights(const std::vector<at::Tensor>& weights, const KerasWeightOptions& options) {
  if (!built_) throw ConfigError(describe() + " is not built yet: it has no weights to set");
  if (count_params() > 0 && !no_keras_weights_reason().empty()) {
    throw ConfigError(describe() + " has no Keras weight layout: " + no_keras_weights_reason());
  }
  torch::NoGradGuard no_grad;
  set_keras_weights_impl(weights, options);
}

std::vector<at::Tensor> Layer::keras_weights() const {
  if (!built_) throw ConfigError(describe() + " is not built yet: it has no weights");
  if (count_params() > 0 && !no_keras_weights_reason().empty()) {
    throw ConfigError(describe() + " has no Keras weight layout: " + no_keras_weights_reason());
  }
  return keras_weights_impl();
}

void Layer::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  if (count_params() == 0) {
    if (!weights.empty()) {
      throw ConfigError(describe() + " has no weights; got " + std::to_string(weights.size()) + " Keras weights");
    }
    return;
  }
  throw ConfigError(describe() +
                    " has parameters but its class has no Keras weight layout: it overrides "
                    "Layer::set_keras_weights_impl and keras_weights_impl (docs/extending.md)");
}

std::vector<at::Tensor> Layer::keras_weights_impl() const {
  if (count_params() == 0) return {};
  throw ConfigError(describe() +
                    " has parameters but its class has no Keras weight layout: it overrides "
                    "Layer::set_keras_weights_impl and keras_weights_impl (docs/extending.md)");
}

}  // namespace torchfit

namespace torchfit::detail {

void expect_keras_weight_count(const std::string& who, const std::vector<at::Tensor>& weights, size_t n) {
  if (weights.size() != n) {
    throw ConfigError(who + ": got " + std::to_string(weights.size()) + " Keras weights, the layer takes " +
                      std::to_string(n));
  }
}

void expect_keras_weight_dims(const std::string& who, const at::Tensor& value, int64_t dims, const std::string& what) {
  if (value.dim() != dims) {
    throw ConfigError(who + ": the " + what + " has " + std::to_string(value.dim()) + " dimensions, " +
                      std::to_string(dims) + " expected");
  }
}

void assign_keras_weight(const std::string& who, at::Tensor& param, const at::Tensor& value, const std::string& what) {
  if (!param.defined()) throw ConfigError(who + ": the layer has no " + what);
  if (param.sizes() != value.sizes()) {
    throw ConfigError(who + ": " + what + " has shape " + c10::str(value.sizes()) +
                      " in torchfit's layout; the layer expects " + c10::str(param.sizes()));
  }
  torch::NoGradGuard no_grad;
  param.copy_(value.to(param.scalar_type()));
}

at::Tensor keras_weight_copy(const at::Tensor& t) { return t.detach().clone(at::MemoryFormat::Contiguous); }

}  // namespace torchfit::detail

namespace torchfit {

bool Layer::onnx_holds_built_size() const {
  const nlohmann::json c = config();
  if (c.value("padding", std::string()) != "same" || !c.contains("strides") || !c["strides"].is_array()) return false;
  for (const auto& s : c["strides"]) {
    if (s.is_number_integer() && s.get<int64_t>() > 1) return true;
  }
  return false;
}

}  // namespace torchfit

namespace torchfit::detail {

std::string onnx_name(const Layer& layer, const std::string& suffix) { return layer.name() + "/" + suffix; }

std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p) {
  std::vector<int64_t> pads(p.size());
  for (size_t i = 0; i < p.size() / 2; ++i) {
    pads[i] = p[2 * i];                     // begins
    pads[p.size() / 2 + i] = p[2 * i + 1];  // ends
  }
  return pads;
}

std::string onnx_sequence_as_image(const Layer& l, io::OnnxGraph& g, const std::string& x, int64_t channels) {
  const std::string t =
      g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, onnx_name(l, "to_channels_first"));
  return g.add_node("Reshape", {t, g.add_int64s(onnx_name(l, "image_shape"), {0, channels, 1, -1})}, {},
                    onnx_name(l, "as_image"));
}

std::string onnx_image_as_sequence(const Layer& l, io::OnnxGraph& g, const std::string& y, int64_t channels) {
  // Squeeze as a Reshape: OpenCV 4.6 reads Squeeze's axes only as an attribute (opset < 13).
  const std::string row = g.add_node("Reshape", {y, g.add_int64s(onnx_name(l, "sequence_shape"), {0, channels, -1})},
                                     {}, onnx_name(l, "as_sequence"));
  return g.add_node("Transpose", {row}, {{"perm", std::vector<int64_t>{0, 2, 1}}}, onnx_name(l, "to_steps_first"));
}

std::vector<int64_t> onnx_pair(at::IntArrayRef a) { return {a[0], a[1]}; }

}  // namespace torchfit::detail
