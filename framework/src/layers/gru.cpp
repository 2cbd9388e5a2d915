#include <torchfit/layers/gru.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

GRUImpl::GRUImpl(GRUOptions opts) : RecurrentImpl(keras_class_name, std::move(opts)) {
  check_activation(options.recurrent_activation(), describe());
  if (options.implementation() != 1 && options.implementation() != 2) {
    throw ConfigError(describe() + ": implementation must be 1 or 2, got " + std::to_string(options.implementation()));
  }
}

Shape GRUImpl::build_impl(const Shape& in) {
  const int64_t c = sequence_features(in), u = options.units();
  kernel = register_parameter("kernel", detail::glorot_uniform({c, 3 * u}, c, 3 * u));
  recurrent_kernel = register_parameter("recurrent_kernel", detail::orthogonal(u, 3 * u));
  if (options.use_bias()) {
    bias = register_parameter("bias", options.reset_after() ? at::zeros({2, 3 * u}) : at::zeros({3 * u}));
  }
  return recurrent_output_shape(in);
}

bool GRUImpl::fused(bool recurrent_mask) const {
  return options.reset_after() && options.activation() == "tanh" && options.recurrent_activation() == "sigmoid" &&
         !recurrent_mask;
}

std::pair<at::Tensor, at::Tensor> GRUImpl::biases() const {
  if (!bias.defined()) return {};
  if (!options.reset_after()) return {bias, at::Tensor()};
  return {bias.select(0, 0), bias.select(0, 1)};
}

at::Tensor GRUImpl::forward(const at::Tensor& x) {
  const Masks masks = dropout_masks(x);
  return fused(masks.state.defined() || masked()) ? fused_forward(steps_input(x, masks)) : loop_forward(x, masks);
}

// at::gru, batch first, one layer, one direction; PyTorch's gates r, z, n are Keras's blocks 1, 0, 2.
at::Tensor GRUImpl::fused_forward(const at::Tensor& xs) const {
  const int64_t u = options.units();
  const std::vector<int64_t> torch_order = {1, 0, 2};
  const auto gates = [&](const at::Tensor& t, int64_t dim) { return detail::reorder_gates(t, dim, u, torch_order); };
  const at::Tensor h0 = at::zeros({1, xs.size(0), u}, xs.options());
  std::vector<at::Tensor> params = {gates(kernel, 1).t().contiguous(), gates(recurrent_kernel, 1).t().contiguous()};
  if (bias.defined()) {
    const auto [b_in, b_rec] = biases();
    params.push_back(gates(b_in, 0));
    params.push_back(gates(b_rec, 0));
  }
  const auto out = at::gru(xs, h0, params, bias.defined(), 1, 0.0, is_training(), false, true);
  return sequence_output(std::get<0>(out));
}

// Keras 3's GRUCell.call (implementation 2; its recurrent dropout as implementation 1 with one mask).
at::Tensor GRUImpl::loop_forward(const at::Tensor& x, const Masks& masks) const {
  // Plain variables, not a structured binding: the step lambda captures them (C++17 forbids capturing bindings).
  const std::pair<at::Tensor, at::Tensor> b = biases();
  const at::Tensor b_in = b.first, b_rec = b.second;
  at::Tensor xw = at::matmul(steps_input(x, masks), kernel);
  if (b_in.defined()) xw = xw + b_in;
  const int64_t u = options.units();
  const std::string& act = options.activation();
  const std::string& gate = options.recurrent_activation();
  const bool after = options.reset_after();
  return run_steps(xw, 1, [&](const at::Tensor& xw_t, std::vector<at::Tensor>& state) {
    const at::Tensor& h = state[0];
    const at::Tensor prev = masks.state.defined() ? h * masks.state : h;
    const auto xg = xw_t.chunk(3, 1);
    at::Tensor inner = at::matmul(prev, after ? recurrent_kernel : recurrent_kernel.narrow(1, 0, 2 * u));
    if (after && b_rec.defined()) inner = inner + b_rec;
    const at::Tensor z = apply_activation(gate, xg[0] + inner.narrow(1, 0, u));
    const at::Tensor r = apply_activation(gate, xg[1] + inner.narrow(1, u, u));
    const at::Tensor rh =
        after ? r * inner.narrow(1, 2 * u, u) : at::matmul(r * prev, recurrent_kernel.narrow(1, 2 * u, u));
    const at::Tensor hh = apply_activation(act, xg[2] + rh);
    state[0] = z * h + (1 - z) * hh;
    return state[0];
  });
}

// ONNX GRU: W (1, 3·units, C), R (1, 3·units, units) transposed (gates z, r, h as Keras's), B (1, 6·units) =
// [input bias, recurrent bias] (the recurrent one 0 without reset_after), linear_before_reset = reset_after.
RecurrentLayer::OnnxRecurrentWeights GRUImpl::onnx_weights() const {
  if (options.activation() != "tanh" || options.recurrent_activation() != "sigmoid") {
    throw ConfigError(describe() +
                      ": ONNX export supports activation tanh and recurrent_activation sigmoid only, got " +
                      options.activation() + " and " + options.recurrent_activation());
  }
  const int64_t u = options.units();
  const auto [b_in, b_rec] = biases();
  const at::Tensor wb = b_in.defined() ? b_in.detach() : at::zeros({3 * u});
  const at::Tensor rb = b_rec.defined() ? b_rec.detach() : at::zeros({3 * u});
  return {"GRU",
          kernel.detach().t().unsqueeze(0),
          recurrent_kernel.detach().t().unsqueeze(0),
          at::cat({wb, rb}).unsqueeze(0),
          {io::OnnxAttribute{"linear_before_reset", int64_t{options.reset_after() ? 1 : 0}}}};
}

std::string GRUImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  return onnx_recurrent(g, in[0]);
}

TORCHFIT_REGISTER_LAYER(GRU);

}  // namespace torchfit
