#include <torchfit/layers/bidirectional.h>

#include <cstdint>

#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

namespace {

std::string without_prefix(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

// A layer's name, or the automatic one Keras gives it at construction (the class in snake_case).
std::string name_or_automatic(const Layer& layer) {
  return layer.name().empty() ? keras_snake_case(layer.class_name()) : layer.name();
}

// A fresh layer from `spec` (Keras re-creates the wrapped layers from their configs), which must be recurrent.
std::shared_ptr<RecurrentLayer> recurrent_from(const nlohmann::json& spec, const std::string& who,
                                               const std::string& role) {
  std::shared_ptr<Layer> layer = layer_from_json(spec);
  auto recurrent = std::dynamic_pointer_cast<RecurrentLayer>(layer);
  if (!recurrent) {
    throw ConfigError(who + ": its " + role + " must be a recurrent layer (SimpleRNN, LSTM, GRU), got " +
                      layer->class_name());
  }
  if (recurrent->activity_regularizer()) {
    throw ConfigError(who + ": its " + role + " '" + layer->name() +
                      "' has an activity_regularizer, which torchfit applies to a model's layers only: give it "
                      "to the Bidirectional");
  }
  return recurrent;
}

}  // namespace

BidirectionalImpl::BidirectionalImpl(BidirectionalOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (!options.layer()) throw ConfigError(describe() + ": needs a layer to wrap (SimpleRNN, LSTM, GRU)");
  if (!options.merge_mode()) {
    throw ConfigError(describe() +
                      ": merge_mode None (the two outputs as a list) is not supported: torchfit's layers have one "
                      "output; use concat, sum, mul or ave");
  }
  const std::string& mode = *options.merge_mode();
  if (mode != "concat" && mode != "sum" && mode != "mul" && mode != "ave") {
    throw ConfigError(describe() + ": merge_mode must be concat, sum, mul or ave, got \"" + mode + "\"");
  }
  const std::string base = name_or_automatic(*options.layer());
  nlohmann::json spec = layer_to_json(*options.layer());
  spec["config"]["name"] = "forward_" + without_prefix(base, "forward_");
  forward_layer = recurrent_from(spec, describe(), "layer");
  if (options.backward_layer()) {
    nlohmann::json back = layer_to_json(*options.backward_layer());
    back["config"]["name"] = name_or_automatic(*options.backward_layer());
    backward_layer = recurrent_from(back, describe(), "backward_layer");
  } else {
    spec["config"]["name"] = "backward_" + without_prefix(base, "backward_");
    spec["config"]["go_backwards"] = !forward_layer->recurrent().go_backwards;
    backward_layer = recurrent_from(spec, describe(), "layer");
  }
  const RecurrentSettings f = forward_layer->recurrent(), b = backward_layer->recurrent();
  if (f.go_backwards == b.go_backwards) {
    throw ConfigError(describe() + ": the forward and backward layers must have different go_backwards, both have " +
                      (f.go_backwards ? "true" : "false"));
  }
  if (f.return_sequences != b.return_sequences) {
    throw ConfigError(describe() + ": the forward and backward layers must have the same return_sequences");
  }
  // Keras's force_zero_output_for_mask: masked steps of a returned sequence are zeros in both directions.
  forward_layer->set_zero_output_for_mask(f.return_sequences);
  backward_layer->set_zero_output_for_mask(b.return_sequences);
  register_module("forward_layer", forward_layer);
  register_module("backward_layer", backward_layer);
}

Shape BidirectionalImpl::build_impl(const Shape& in) {
  if (in.size() != 2) {
    throw ConfigError(describe() + " needs a sequence input (steps, features), got " + format_shape(in));
  }
  Shape out;
  try {
    out = forward_layer->build(in);
    backward_layer->build(in);
  } catch (const ConfigError& e) {
    throw ConfigError(describe() + ": " + e.what());
  }
  if (!options.weights().empty()) {
    const auto& w = options.weights();
    const size_t n = forward_layer->keras_weight_names().size();
    detail::expect_keras_weight_count(describe(), w, n + backward_layer->keras_weight_names().size());
    forward_layer->set_keras_weights({w.begin(), w.begin() + static_cast<std::ptrdiff_t>(n)});
    backward_layer->set_keras_weights({w.begin() + static_cast<std::ptrdiff_t>(n), w.end()});
  }
  if (*options.merge_mode() == "concat") out.back() *= 2;
  return out;
}

at::Tensor BidirectionalImpl::merge(const at::Tensor& y, const at::Tensor& y_rev) const {
  const std::string& mode = *options.merge_mode();
  if (mode == "concat") return at::cat({y, y_rev}, -1);
  if (mode == "sum") return y + y_rev;
  if (mode == "mul") return y * y_rev;
  return (y + y_rev) / 2;
}

// Keras's Bidirectional.call: the backward layer's sequence is in processing order, flipped back in time.
at::Tensor BidirectionalImpl::forward(const at::Tensor& x) { return forward_masked({x}, {at::Tensor()}); }

at::Tensor BidirectionalImpl::forward_masked(const std::vector<at::Tensor>& xs, const std::vector<at::Tensor>& masks) {
  const at::Tensor y = forward_layer->forward_masked(xs, masks);
  at::Tensor y_rev = backward_layer->forward_masked(xs, masks);
  if (forward_layer->recurrent().return_sequences) y_rev = y_rev.flip(1);
  return merge(y, y_rev);
}

at::Tensor BidirectionalImpl::compute_mask(const std::vector<at::Tensor>& xs,
                                           const std::vector<at::Tensor>& masks) const {
  return forward_layer->compute_mask(xs, masks);
}

nlohmann::json BidirectionalImpl::config() const {
  nlohmann::json c = base_config();
  c["merge_mode"] = *options.merge_mode();
  c["layer"] = layer_to_json(*forward_layer);
  c["backward_layer"] = layer_to_json(*backward_layer);
  return c;
}

std::vector<std::string> BidirectionalImpl::keras_weight_names() const {
  std::vector<std::string> names;
  for (const auto* l : {forward_layer.get(), backward_layer.get()}) {
    for (const auto& w : l->keras_weight_names()) names.push_back(l->name() + "/" + w);
  }
  return names;
}

void BidirectionalImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  const size_t n = forward_layer->keras_weight_names().size();
  detail::expect_keras_weight_count(describe(), weights, n + backward_layer->keras_weight_names().size());
  forward_layer->set_keras_weights({weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(n)}, o);
  backward_layer->set_keras_weights({weights.begin() + static_cast<std::ptrdiff_t>(n), weights.end()}, o);
}

std::vector<at::Tensor> BidirectionalImpl::keras_weights_impl() const {
  std::vector<at::Tensor> w = forward_layer->keras_weights();
  for (auto& t : backward_layer->keras_weights()) w.push_back(std::move(t));
  return w;
}

namespace {

// Whether two recurrent layers' configs agree but for their names and go_backwards.
bool mirrored(const Layer& a, const Layer& b) {
  nlohmann::json ca = a.config(), cb = b.config();
  for (auto* c : {&ca, &cb}) {
    c->erase("name");
    c->erase("go_backwards");
  }
  return a.class_name() == b.class_name() && ca == cb;
}

}  // namespace

// X (steps, N, C) → Y (steps, 2, N, units): direction 0 forward, 1 the backward pass written in input order.
std::string BidirectionalImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  if (!mirrored(*forward_layer, *backward_layer)) {
    throw ConfigError(describe() +
                      ": ONNX export needs the backward layer to be the forward layer's mirror (the same config but "
                      "name and go_backwards)");
  }
  const RecurrentSettings s = forward_layer->recurrent();
  if (s.go_backwards) throw ConfigError(describe() + ": ONNX export needs a forward layer without go_backwards");
  RecurrentLayer::OnnxRecurrentWeights fw, bw;
  try {
    fw = forward_layer->onnx_weights();
    bw = backward_layer->onnx_weights();
  } catch (const ConfigError& e) {
    throw ConfigError(describe() + ": " + e.what());
  }
  const auto init = [&](const char* what, const at::Tensor& a, const at::Tensor& b) {
    return g.add_initializer(onnx_name(*this, what), at::cat({a, b}, 0).contiguous());
  };
  const std::string x =
      g.add_node("Transpose", {in[0]}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, onnx_name(*this, "to_steps_first"));
  std::vector<io::OnnxAttribute> attributes = fw.attributes;
  attributes.insert(attributes.begin(), io::OnnxAttribute{"hidden_size", s.units});
  attributes.emplace_back("direction", "bidirectional");
  const std::string y = g.add_node(fw.op, {x, init("W", fw.w, bw.w), init("R", fw.r, bw.r), init("B", fw.b, bw.b)},
                                   attributes, onnx_name(*this, fw.op));
  const auto ints = [&](const char* what, std::vector<int64_t> v) { return g.add_int64s(onnx_name(*this, what), v); };
  std::string a, b;
  if (s.return_sequences) {  // (N, steps, 2, units), each direction's (N, steps, units)
    const std::string t =
        g.add_node("Transpose", {y}, {{"perm", std::vector<int64_t>{2, 0, 1, 3}}}, onnx_name(*this, "to_batch_first"));
    const auto direction = [&](int64_t d, const char* what) {
      const std::string part = g.add_node("Slice", {t, ints("start", {d}), ints("end", {d + 1}), ints("axis2", {2})},
                                          {}, onnx_name(*this, what));
      return g.add_node("Squeeze", {part, ints("axis2_sq", {2})}, {}, onnx_name(*this, what));
    };
    a = direction(0, "forward");
    b = direction(1, "backward");
  } else {  // the forward pass's last step, the backward pass's first in time (its last processed)
    const auto step = [&](int64_t t0, int64_t t1, int64_t d, const char* what) {
      const std::string part =
          g.add_node("Slice", {y, ints("start", {t0, d}), ints("end", {t1, d + 1}), ints("axes01", {0, 1})}, {},
                     onnx_name(*this, what));
      return g.add_node("Squeeze", {part, ints("axes01_sq", {0, 1})}, {}, onnx_name(*this, what));
    };
    a = step(-1, INT64_MAX, 0, "forward");
    b = step(0, 1, 1, "backward");
  }
  const std::string& mode = *options.merge_mode();
  if (mode == "concat") return g.add_node("Concat", {a, b}, {{"axis", -1}}, onnx_name(*this, "Concat"));
  if (mode == "mul") return g.add_node("Mul", {a, b}, {}, onnx_name(*this, "Mul"));
  const std::string sum = g.add_node("Add", {a, b}, {}, onnx_name(*this, "Add"));
  if (mode == "sum") return sum;
  return g.add_node("Mul", {sum, g.add_scalar(onnx_name(*this, "half"), 0.5f)}, {}, onnx_name(*this, "ave"));
}

namespace {

// Keras's Bidirectional.from_config: "layer" (and "backward_layer" when given) rebuilt from their specs.
std::shared_ptr<Layer> bidirectional_from_config(const nlohmann::json& config) {
  LayerConfigReader r(config, BidirectionalImpl::keras_class_name);
  r.require("layer");
  const auto nested = [&](const char* key) {
    try {
      return layer_from_json(config.at(key));
    } catch (const ConfigError& e) {
      throw ConfigError(r.who() + ": its " + key + ": " + e.what());
    }
  };
  BidirectionalOptions o(nested("layer"));
  if (r.has("backward_layer")) o.backward_layer(nested("backward_layer"));
  if (r.has("merge_mode")) {
    o.merge_mode(r.required<std::string>("merge_mode"));
  } else if (config.contains("merge_mode")) {
    o.merge_mode(std::nullopt);  // Keras writes None as null: refused by the constructor
  }
  o.name(r.name());
  o.input_shape(r.input_shape());
  auto layer = std::make_shared<BidirectionalImpl>(std::move(o));
  r.finish();
  return layer;
}

}  // namespace

LayerRegistration torchfit_layer_registration_Bidirectional() {
  return {BidirectionalImpl::keras_class_name, bidirectional_from_config};
}
[[maybe_unused]] static const bool torchfit_layer_registered_Bidirectional =
    register_layer(torchfit_layer_registration_Bidirectional());

}  // namespace torchfit
