#include "swish.h"

#include <torchfit/layers/registry.h>

SwishImpl::SwishImpl(SwishOptions opts) : Layer("Swish", opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());  // lets Swish be a model's first layer
}

torchfit::Shape SwishImpl::build_impl(const torchfit::Shape& input_shape) {
  // Parameters are created here, once the input shape is known (none of Swish's depends on it).
  beta = register_parameter("beta", at::full({1}, options.beta()), /*requires_grad=*/options.trainable());
  return input_shape;  // output shape, Keras order
}

at::Tensor SwishImpl::forward(const at::Tensor& x) { return x * at::sigmoid(beta * x); }

nlohmann::json SwishImpl::config() const {
  auto c = base_config();  // "name" and, when declared, "input_shape"
  c["beta"] = options.beta();
  c["trainable"] = options.trainable();
  return c;
}

// The one registration line: the registry rebuilds Swish from its config (model JSON, checkpoints).
TORCHFIT_REGISTER_LAYER(Swish, [](const nlohmann::json& c) -> std::shared_ptr<torchfit::Layer> {
  torchfit::LayerConfigReader r(c, "Swish");
  auto layer = std::make_shared<SwishImpl>(
      SwishOptions().beta(r.optional("beta", 1.0)).trainable(r.optional("trainable", true)).name(r.name()));
  r.finish();  // rejects unknown fields, e.g. a typo "betta"
  return layer;
});
