#include <torchfit/layers/simple_rnn.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

namespace {

// Keras's orthogonal initializer (gain 1): Q of the QR of a normal matrix, its columns' signs fixed by R's
// diagonal. Kept in one function so a general initializer module can replace it.
at::Tensor orthogonal(int64_t rows, int64_t cols) {
  const bool wide = rows < cols;
  const at::Tensor a = wide ? at::randn({cols, rows}) : at::randn({rows, cols});
  auto qr = at::linalg_qr(a);
  at::Tensor q = std::get<0>(qr) * at::sign(at::diagonal(std::get<1>(qr)));
  return (wide ? q.t() : q).contiguous();
}

// Keras's dropout mask of an RNN cell: kept with probability 1 − rate, scaled by 1 / (1 − rate); on the
// input's device and dtype.
at::Tensor dropout_mask(int64_t n, int64_t d, double rate, const at::TensorOptions& like) {
  return at::bernoulli(at::full({n, d}, 1.0 - rate, like)) / (1.0 - rate);
}

}  // namespace

SimpleRNNImpl::SimpleRNNImpl(SimpleRNNOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.units() <= 0) {
    throw ConfigError(describe() + ": units must be > 0, got " + std::to_string(options.units()));
  }
  check_activation(options.activation(), describe());
  for (const auto& [what, rate] : {std::pair<const char*, double>{"dropout", options.dropout()},
                                   std::pair<const char*, double>{"recurrent_dropout", options.recurrent_dropout()}}) {
    if (rate < 0.0 || rate >= 1.0) {
      throw ConfigError(describe() + ": " + what + " must lie in [0, 1), got " + std::to_string(rate));
    }
  }
  if (options.return_state()) throw ConfigError(describe() + ": return_state true is not supported yet");
  if (options.stateful()) throw ConfigError(describe() + ": stateful true is not supported yet");
  if (options.time_major()) throw ConfigError(describe() + ": time_major true is not supported yet");
}

Shape SimpleRNNImpl::build_impl(const Shape& in) {
  if (in.size() != 2) {
    throw ConfigError(describe() + " needs a sequence input (steps, features), got " + format_shape(in));
  }
  const int64_t c = in[1], u = options.units();
  kernel = register_parameter("kernel", detail::glorot_uniform({c, u}, c, u));
  recurrent_kernel = register_parameter("recurrent_kernel", orthogonal(u, u));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({u}));
  return options.return_sequences() ? Shape{in[0], u} : Shape{u};
}

at::Tensor SimpleRNNImpl::forward(const at::Tensor& x_in) {
  const int64_t n = x_in.size(0), steps = x_in.size(1), u = options.units();
  at::Tensor x = options.go_backwards() ? x_in.flip(1) : x_in;
  const bool drop = is_training() && options.dropout() > 0.0;
  const bool rec_drop = is_training() && options.recurrent_dropout() > 0.0;
  if (drop) x = x * dropout_mask(n, x.size(2), options.dropout(), x.options()).unsqueeze(1);
  at::Tensor xw = at::matmul(x, kernel);
  if (bias.defined()) xw = xw + bias;
  const at::Tensor rec_mask = rec_drop ? dropout_mask(n, u, options.recurrent_dropout(), xw.options()) : at::Tensor();
  at::Tensor h = at::zeros({n, u}, xw.options());
  std::vector<at::Tensor> outputs;
  for (int64_t t = 0; t < steps; ++t) {
    const at::Tensor prev = rec_drop ? h * rec_mask : h;
    h = apply_activation(options.activation(), xw.select(1, t) + at::matmul(prev, recurrent_kernel));
    if (options.return_sequences()) outputs.push_back(h);
  }
  return options.return_sequences() ? at::stack(outputs, 1) : h;
}

nlohmann::json SimpleRNNImpl::config() const { return base_config(options); }

void SimpleRNNImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, bias.defined() ? 3 : 2);
  detail::assign_keras_weight(describe(), kernel, weights[0], "kernel");
  detail::assign_keras_weight(describe(), recurrent_kernel, weights[1], "recurrent_kernel");
  if (bias.defined()) detail::assign_keras_weight(describe(), bias, weights[2], "bias");
}

std::vector<at::Tensor> SimpleRNNImpl::keras_weights_impl() const {
  std::vector<at::Tensor> w = {detail::keras_weight_copy(kernel), detail::keras_weight_copy(recurrent_kernel)};
  if (bias.defined()) w.push_back(detail::keras_weight_copy(bias));
  return w;
}

// ONNX RNN: X (steps, N, C), W (1, units, C) = kernelᵀ, R (1, units, units) = recurrent_kernelᵀ, B (1, 2·units)
// = [bias, 0]; Y (steps, 1, N, units).
std::string SimpleRNNImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  if (options.activation() != "tanh" || options.go_backwards()) {
    throw ConfigError(describe() + ": ONNX export supports activation tanh without go_backwards only, got activation " +
                      options.activation() + (options.go_backwards() ? " with go_backwards" : ""));
  }
  const int64_t u = options.units();
  const at::Tensor b = bias.defined() ? bias.detach() : at::zeros({u});
  const std::string x =
      g.add_node("Transpose", {in[0]}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, onnx_name(*this, "to_steps_first"));
  const std::string w = g.add_initializer(onnx_name(*this, "W"), kernel.detach().t().unsqueeze(0).contiguous());
  const std::string r =
      g.add_initializer(onnx_name(*this, "R"), recurrent_kernel.detach().t().unsqueeze(0).contiguous());
  const std::string bb = g.add_initializer(onnx_name(*this, "B"), at::cat({b, at::zeros({u})}).unsqueeze(0));
  const std::string y = g.add_node("RNN", {x, w, r, bb}, {{"hidden_size", u}}, onnx_name(*this, "RNN"));
  const std::string y3 = g.add_node("Squeeze", {y, g.add_int64s(onnx_name(*this, "axis1"), {1})}, {},
                                    onnx_name(*this, "Squeeze"));  // (steps, N, units)
  if (options.return_sequences()) {
    return g.add_node("Transpose", {y3}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, onnx_name(*this, "to_batch_first"));
  }
  const std::string last =
      g.add_node("Slice",
                 {y3, g.add_int64s(onnx_name(*this, "last"), {-1}), g.add_int64s(onnx_name(*this, "end"), {INT64_MAX}),
                  g.add_int64s(onnx_name(*this, "axis0"), {0})},
                 {}, onnx_name(*this, "last_step"));
  return g.add_node("Squeeze", {last, g.add_int64s(onnx_name(*this, "axis0_sq"), {0})}, {}, onnx_name(*this, "last"));
}

TORCHFIT_REGISTER_LAYER(SimpleRNN);

}  // namespace torchfit
