#include <torchfit/layers/time_distributed.h>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/registry.h>

#include "layers/layer_export.h"

namespace torchfit {

namespace {

// torchfit holds a Keras 3-axis shape (H, W, C) channels first; every other rank in Keras's order.
at::Tensor held_to_keras(const at::Tensor& t, size_t keras_rank) {
  return keras_rank == 3 ? t.permute({0, 2, 3, 1}) : t;
}
at::Tensor keras_to_held(const at::Tensor& t, size_t keras_rank) {
  return keras_rank == 3 ? t.permute({0, 3, 1, 2}) : t;
}

Shape step_shape(const Shape& s) { return Shape(s.begin() + 1, s.end()); }

}  // namespace

TimeDistributedImpl::TimeDistributedImpl(TimeDistributedOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)), layer(options.layer()) {
  set_declared_input_shape(options.input_shape());
  if (!layer) throw ConfigError(describe() + ": needs a layer to apply to each time step");
  if (layer->takes_list()) {
    throw ConfigError(describe() + ": the layer applied to each step takes one input, got " + layer->class_name() +
                      " '" + layer->name() + "' (a multi-input layer)");
  }
  if (layer->activity_regularizer()) {
    throw ConfigError(describe() + ": its layer '" + layer->name() +
                      "' has an activity_regularizer, which torchfit applies to a model's layers only: give it to "
                      "the TimeDistributed");
  }
  if (layer->name().empty()) layer->set_name(keras_snake_case(layer->class_name()));  // Keras names it at creation
  register_module("layer", layer);
}

Shape TimeDistributedImpl::build_impl(const Shape& in) {
  if (in.size() < 2) {
    throw ConfigError(describe() + " needs an input of at least two axes (steps, features…), got " + format_shape(in) +
                      " (Keras: at least 3 dimensions with the batch)");
  }
  Shape out;
  try {
    out = layer->build(step_shape(in));
  } catch (const ConfigError& e) {
    throw ConfigError(describe() + ": its layer, on each step " + format_shape(step_shape(in)) + ": " + e.what());
  }
  out.insert(out.begin(), in[0]);
  return out;
}

// Keras's TimeDistributed.call, with the steps folded into the batch (one call of the layer).
at::Tensor TimeDistributedImpl::forward(const at::Tensor& x) {
  const size_t in_rank = static_cast<size_t>(x.dim()) - 1;  // Keras's rank, batch excluded
  const at::Tensor k = held_to_keras(x, in_rank);           // (N, T, …)
  std::vector<int64_t> folded = k.sizes().vec();
  const int64_t n = folded[0], steps = folded[1];
  folded.erase(folded.begin());
  folded[0] = n * steps;
  const at::Tensor step_out = layer->forward(keras_to_held(k.reshape(folded), in_rank - 1));
  const size_t out_rank = static_cast<size_t>(step_out.dim());  // the step's Keras rank + the steps
  const at::Tensor y = held_to_keras(step_out, out_rank - 1);
  std::vector<int64_t> unfolded = y.sizes().vec();
  unfolded[0] = steps;
  unfolded.insert(unfolded.begin(), n);
  return keras_to_held(y.reshape(unfolded), out_rank);
}

nlohmann::json TimeDistributedImpl::config() const {
  nlohmann::json c = base_config();
  c["layer"] = layer_to_json(*layer);
  return c;
}

int64_t TimeDistributedImpl::flops_per_sample() const {
  return built() ? layer->flops_per_sample() * input_shape()[0] : 0;
}

void TimeDistributedImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions& o) {
  layer->set_keras_weights(weights, o);
}

std::vector<at::Tensor> TimeDistributedImpl::keras_weights_impl() const { return layer->keras_weights(); }

namespace {

// `x` Transposed from held to Keras's order (or back) for a Keras rank of 3, else `x`.
std::string onnx_reorder(const Layer& l, io::OnnxGraph& g, const std::string& x, size_t keras_rank, bool to_keras,
                         const char* what) {
  if (keras_rank != 3) return x;
  const std::vector<int64_t> perm = to_keras ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 3, 1, 2};
  return g.add_node("Transpose", {x}, {{"perm", perm}}, detail::onnx_name(l, what));
}

std::string onnx_reshape(const Layer& l, io::OnnxGraph& g, const std::string& x, std::vector<int64_t> dims,
                         const char* what) {
  return g.add_node("Reshape", {x, g.add_int64s(detail::onnx_name(l, std::string(what) + "_shape"), dims)}, {},
                    detail::onnx_name(l, what));
}

}  // namespace

std::string TimeDistributedImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  const Shape& is = input_shape();
  const Shape& os = output_shape();
  std::vector<int64_t> folded = {-1};
  for (size_t i = 1; i < is.size(); ++i) folded.push_back(is[i]);
  std::string x = onnx_reorder(*this, g, in[0], is.size(), true, "to_keras_order");
  x = onnx_reorder(*this, g, onnx_reshape(*this, g, x, folded, "fold_steps"), is.size() - 1, false, "step_held");
  std::string y = layer->export_onnx(g, {x});
  if (y.empty()) return y;
  y = onnx_reorder(*this, g, y, os.size() - 1, true, "step_keras_order");
  std::vector<int64_t> unfolded = {-1, os[0]};
  for (size_t i = 1; i < os.size(); ++i) unfolded.push_back(os[i]);
  return onnx_reorder(*this, g, onnx_reshape(*this, g, y, unfolded, "unfold_steps"), os.size(), false, "to_held");
}

namespace {

// Keras's Wrapper.from_config: "layer" rebuilt from its spec.
std::shared_ptr<Layer> time_distributed_from_config(const nlohmann::json& config) {
  LayerConfigReader r(config, TimeDistributedImpl::keras_class_name);
  r.require("layer");
  std::shared_ptr<Layer> inner;
  try {
    inner = layer_from_json(config.at("layer"));
  } catch (const ConfigError& e) {
    throw ConfigError(r.who() + ": its layer: " + e.what());
  }
  TimeDistributedOptions o(inner);
  o.name(r.name());
  o.input_shape(r.input_shape());
  auto layer = std::make_shared<TimeDistributedImpl>(std::move(o));
  r.finish();
  return layer;
}

}  // namespace

LayerRegistration torchfit_layer_registration_TimeDistributed() {
  return {TimeDistributedImpl::keras_class_name, time_distributed_from_config};
}
[[maybe_unused]] static const bool torchfit_layer_registered_TimeDistributed =
    register_layer(torchfit_layer_registration_TimeDistributed());

}  // namespace torchfit
