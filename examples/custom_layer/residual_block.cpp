#include "residual_block.h"

#include <torchfit/saving/onnx.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

ResidualBlockImpl::ResidualBlockImpl(ResidualBlockOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  // Validate arguments in the constructor, naming the layer (describe() → "layer 'x' (ResidualBlock)").
  if (options.kernel_size() <= 0) throw torchfit::ConfigError(describe() + ": kernel_size must be > 0");
  torchfit::check_activation(options.activation(), describe());
}

torchfit::Shape ResidualBlockImpl::build_impl(const torchfit::Shape& in) {
  if (in.size() != 3) {
    throw torchfit::ConfigError(describe() + " expects a 3-D input (H, W, C), got " + torchfit::format_shape(in));
  }
  const int64_t c = in[2];
  // Sub-layers are torchfit layers too: build them here and register them as submodules, so their
  // parameters count, train, move to the device and are saved with this layer.
  conv_a = torchfit::Conv2D(
      torchfit::Conv2DOptions(c, options.kernel_size()).padding("same").activation(options.activation()));
  conv_b = torchfit::Conv2D(torchfit::Conv2DOptions(c, options.kernel_size()).padding("same"));
  conv_a->build(in);
  conv_b->build(in);
  register_module("conv_a", conv_a);
  register_module("conv_b", conv_b);
  return in;
}

at::Tensor ResidualBlockImpl::forward(const at::Tensor& x) {
  return torchfit::apply_activation(options.activation(), x + conv_b->forward(conv_a->forward(x)));
}

// A composite layer exports its sub-layers with saving::export_layer, then its own nodes.
std::string ResidualBlockImpl::export_onnx(torchfit::saving::OnnxGraph& graph,
                                           const std::vector<std::string>& inputs) const {
  const std::string a = torchfit::saving::export_layer(*conv_a, graph, inputs);
  const std::string b = torchfit::saving::export_layer(*conv_b, graph, {a});
  const std::string sum = graph.add_node("Add", {inputs[0], b}, {}, name() + "/Add");
  return graph.add_activation(options.activation(), sum, name());
}

// A composite layer's Keras weights are its sub-layers', one after the other (each takes its own layout).
void ResidualBlockImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights,
                                               const torchfit::KerasWeightOptions& options) {
  const size_t a = conv_a->keras_weights().size();
  if (weights.size() != a + conv_b->keras_weights().size()) {
    throw torchfit::ConfigError(describe() + ": got " + std::to_string(weights.size()) + " Keras weights, takes " +
                                std::to_string(a + conv_b->keras_weights().size()));
  }
  conv_a->set_keras_weights({weights.begin(), weights.begin() + static_cast<std::ptrdiff_t>(a)}, options);
  conv_b->set_keras_weights({weights.begin() + static_cast<std::ptrdiff_t>(a), weights.end()}, options);
}

std::vector<at::Tensor> ResidualBlockImpl::keras_weights_impl() const {
  std::vector<at::Tensor> out = conv_a->keras_weights();
  for (auto& w : conv_b->keras_weights()) out.push_back(w);
  return out;
}

nlohmann::json ResidualBlockImpl::config() const { return base_config(options); }

int64_t ResidualBlockImpl::flops_per_sample() const {
  return built() ? conv_a->flops_per_sample() + conv_b->flops_per_sample() : 0;
}

TORCHFIT_REGISTER_LAYER(ResidualBlock);
