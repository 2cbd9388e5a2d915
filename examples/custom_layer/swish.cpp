#include "swish.h"

#include <torchfit/layers/registry.h>
#include <torchfit/saving/onnx.h>

SwishImpl::SwishImpl(SwishOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());  // lets Swish be a model's first layer
}

torchfit::Shape SwishImpl::build_impl(const torchfit::Shape& input_shape) {
  // Parameters are created here, once the input shape is known (none of Swish's depends on it).
  beta = register_parameter("beta", at::full({1}, options.beta()), /*requires_grad=*/options.trainable());
  return input_shape;  // output shape, Keras order
}

at::Tensor SwishImpl::forward(const at::Tensor& x) { return x * at::sigmoid(beta * x); }

// The same computation as ONNX nodes: inputs[0] is the input tensor's name; beta becomes a weight of the file.
std::string SwishImpl::export_onnx(torchfit::saving::OnnxGraph& graph, const std::vector<std::string>& inputs) const {
  const std::string scaled =
      graph.add_node("Mul", {inputs[0], graph.add_initializer(name() + "/beta", beta)}, {}, name() + "/scaled");
  const std::string gate = graph.add_node("Sigmoid", {scaled}, {}, name() + "/gate");
  return graph.add_node("Mul", {inputs[0], gate}, {}, name() + "/Swish");
}

// The layer's Keras weights, in Keras's order: beta alone.
void SwishImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const torchfit::KerasWeightOptions&) {
  if (weights.size() != 1 || weights[0].sizes() != beta.sizes()) {
    throw torchfit::ConfigError(describe() + ": takes one Keras weight, beta of shape (1)");
  }
  beta.copy_(weights[0].to(beta.scalar_type()));  // set_keras_weights runs this without autograd
}

std::vector<at::Tensor> SwishImpl::keras_weights_impl() const { return {beta.detach().clone()}; }

// "name", "input_shape" (when declared) and every argument SwishOptions::args() lists.
nlohmann::json SwishImpl::config() const { return base_config(options); }

// The one registration line: the registry rebuilds Swish from its config (model JSON, checkpoints),
// reading the arguments SwishOptions::args() lists and rejecting unknown fields (e.g. a typo "betta").
TORCHFIT_REGISTER_LAYER(Swish);
