#include <torchfit/layers/lstm.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

LSTMImpl::LSTMImpl(LSTMOptions opts) : RecurrentImpl(keras_class_name, std::move(opts)) {
  check_activation(options.recurrent_activation(), describe());
  if (options.implementation() != 1 && options.implementation() != 2) {
    throw ConfigError(describe() + ": implementation must be 1 or 2, got " + std::to_string(options.implementation()));
  }
}

Shape LSTMImpl::build_impl(const Shape& in) {
  const int64_t c = sequence_features(in), u = options.units();
  kernel = register_parameter("kernel", detail::glorot_uniform({c, 4 * u}, c, 4 * u));
  recurrent_kernel = register_parameter("recurrent_kernel", detail::orthogonal(u, 4 * u));
  if (options.use_bias()) {
    at::Tensor b = at::zeros({4 * u});
    if (options.unit_forget_bias()) b.narrow(0, u, u).fill_(1.0);
    bias = register_parameter("bias", b);
  }
  return recurrent_output_shape(in);
}

at::Tensor LSTMImpl::initial_value(const std::string& weight, const Initializer& init, at::IntArrayRef shape) const {
  if (weight != "bias" || !options.unit_forget_bias()) return Layer::initial_value(weight, init, shape);
  const int64_t u = options.units();
  const std::string who = describe() + ": bias_initializer";
  return at::cat({init.draw({u}, who), at::ones({u}), init.draw({2 * u}, who)});
}

bool LSTMImpl::fused(bool recurrent_mask) const {
  return options.activation() == "tanh" && options.recurrent_activation() == "sigmoid" && !recurrent_mask;
}

at::Tensor LSTMImpl::forward(const at::Tensor& x) {
  const Masks masks = dropout_masks(x);
  return fused(masks.state.defined() || masked()) ? fused_forward(steps_input(x, masks)) : loop_forward(x, masks);
}

// at::lstm, batch first, one layer, one direction; PyTorch's gates i, f, g, o are Keras's i, f, c, o.
at::Tensor LSTMImpl::fused_forward(const at::Tensor& xs) const {
  const at::Tensor h0 = at::zeros({1, xs.size(0), options.units()}, xs.options());
  std::vector<at::Tensor> params = {kernel.t().contiguous(), recurrent_kernel.t().contiguous()};
  if (bias.defined()) {
    params.push_back(bias);
    params.push_back(at::zeros_like(bias));
  }
  const auto out = at::lstm(xs, {h0, h0}, params, bias.defined(), 1, 0.0, is_training(), false, true);
  return sequence_output(std::get<0>(out));
}

// Keras 3's LSTMCell.call (implementation 2): one projection of the input for the four gates.
at::Tensor LSTMImpl::loop_forward(const at::Tensor& x, const Masks& masks) const {
  at::Tensor xw = at::matmul(steps_input(x, masks), kernel);
  if (bias.defined()) xw = xw + bias;
  const std::string& act = options.activation();
  const std::string& gate = options.recurrent_activation();
  return run_steps(xw, 2, [&](const at::Tensor& xw_t, std::vector<at::Tensor>& state) {
    const at::Tensor prev = masks.state.defined() ? state[0] * masks.state : state[0];
    const auto z = (xw_t + at::matmul(prev, recurrent_kernel)).chunk(4, 1);
    const at::Tensor i = apply_activation(gate, z[0]), f = apply_activation(gate, z[1]);
    const at::Tensor o = apply_activation(gate, z[3]);
    state[1] = f * state[1] + i * apply_activation(act, z[2]);
    state[0] = o * apply_activation(act, state[1]);
    return state[0];
  });
}

// ONNX LSTM: W (1, 4·units, C), R (1, 4·units, units) transposed with the gates as i, o, f, c; B (1, 8·units) =
// [bias, 0] in that order.
RecurrentLayer::OnnxRecurrentWeights LSTMImpl::onnx_weights() const {
  if (options.activation() != "tanh" || options.recurrent_activation() != "sigmoid") {
    throw ConfigError(describe() +
                      ": ONNX export supports activation tanh and recurrent_activation sigmoid only, got " +
                      options.activation() + " and " + options.recurrent_activation());
  }
  const int64_t u = options.units();
  const std::vector<int64_t> onnx_order = {0, 3, 1, 2};
  const auto gates = [&](const at::Tensor& t, int64_t dim) {
    return detail::reorder_gates(t.detach(), dim, u, onnx_order);
  };
  const at::Tensor b = bias.defined() ? gates(bias, 0) : at::zeros({4 * u});
  return {"LSTM",
          gates(kernel, 1).t().unsqueeze(0),
          gates(recurrent_kernel, 1).t().unsqueeze(0),
          at::cat({b, at::zeros({4 * u})}).unsqueeze(0),
          {}};
}

std::string LSTMImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_recurrent(g, in[0]);
}

TORCHFIT_REGISTER_LAYER(LSTM);

}  // namespace torchfit
