#include <torchfit/layers/simple_rnn.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

SimpleRNNImpl::SimpleRNNImpl(SimpleRNNOptions opts) : RecurrentImpl(keras_class_name, std::move(opts)) {}

Shape SimpleRNNImpl::build_impl(const Shape& in) {
  const int64_t c = sequence_features(in), u = options.units();
  kernel = register_parameter("kernel", detail::glorot_uniform({c, u}, c, u));
  recurrent_kernel = register_parameter("recurrent_kernel", detail::orthogonal(u, u));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({u}));
  return recurrent_output_shape(in);
}

at::Tensor SimpleRNNImpl::forward(const at::Tensor& x) {
  const Masks masks = dropout_masks(x);
  at::Tensor xw = at::matmul(steps_input(x, masks), kernel);
  if (bias.defined()) xw = xw + bias;
  return run_steps(xw, 1, [&](const at::Tensor& xw_t, std::vector<at::Tensor>& state) {
    const at::Tensor prev = masks.state.defined() ? state[0] * masks.state : state[0];
    state[0] = apply_activation(options.activation(), xw_t + at::matmul(prev, recurrent_kernel));
    return state[0];
  });
}

// ONNX RNN: W (1, units, C) = kernelᵀ, R (1, units, units) = recurrent_kernelᵀ, B (1, 2·units) = [bias, 0].
RecurrentLayer::OnnxRecurrentWeights SimpleRNNImpl::onnx_weights() const {
  if (options.activation() != "tanh") {
    throw ConfigError(describe() + ": ONNX export supports activation tanh only, got activation " +
                      options.activation());
  }
  const int64_t u = options.units();
  const at::Tensor b = bias.defined() ? bias.detach() : at::zeros({u});
  return {"RNN",
          kernel.detach().t().unsqueeze(0),
          recurrent_kernel.detach().t().unsqueeze(0),
          at::cat({b, at::zeros({u})}).unsqueeze(0),
          {}};
}

std::string SimpleRNNImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  if (options.activation() != "tanh" || options.go_backwards()) {
    throw ConfigError(describe() + ": ONNX export supports activation tanh without go_backwards only, got activation " +
                      options.activation() + (options.go_backwards() ? " with go_backwards" : ""));
  }
  return onnx_recurrent(g, in[0]);
}

TORCHFIT_REGISTER_LAYER(SimpleRNN);

}  // namespace torchfit
