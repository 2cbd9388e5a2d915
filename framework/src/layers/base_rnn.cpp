#include <torchfit/layers/base_rnn.h>

#include <torchfit/layers/activation_fn.h>

#include "layers/layer_export.h"

namespace torchfit {

namespace detail {

at::Tensor orthogonal(int64_t rows, int64_t cols) {
  return Initializer{"Orthogonal"}.draw({rows, cols}, "recurrent_initializer");
}

at::Tensor reorder_gates(const at::Tensor& t, int64_t dim, int64_t units, const std::vector<int64_t>& blocks) {
  std::vector<at::Tensor> parts;
  for (int64_t b : blocks) parts.push_back(t.narrow(dim, b * units, units));
  return at::cat(parts, dim);
}

}  // namespace detail

namespace {

// Keras's dropout mask of an RNN cell: kept with probability 1 − rate, scaled by 1 / (1 − rate); on the
// input's device and dtype.
at::Tensor dropout_mask(int64_t n, int64_t d, double rate, const at::TensorOptions& like) {
  return at::bernoulli(at::full({n, d}, 1.0 - rate, like)) / (1.0 - rate);
}

}  // namespace

void RecurrentLayer::check_recurrent(int64_t units, const std::string& activation, double dropout,
                                     double recurrent_dropout, bool return_state, bool stateful,
                                     bool time_major) const {
  if (units <= 0) throw ConfigError(describe() + ": units must be > 0, got " + std::to_string(units));
  check_activation(activation, describe());
  for (const auto& [what, rate] : {std::pair<const char*, double>{"dropout", dropout},
                                   std::pair<const char*, double>{"recurrent_dropout", recurrent_dropout}}) {
    if (rate < 0.0 || rate >= 1.0) {
      throw ConfigError(describe() + ": " + what + " must lie in [0, 1), got " + std::to_string(rate));
    }
  }
  if (return_state) throw ConfigError(describe() + ": return_state true is not supported yet");
  if (stateful) throw ConfigError(describe() + ": stateful true is not supported yet");
  if (time_major) throw ConfigError(describe() + ": time_major true is not supported yet");
}

int64_t RecurrentLayer::sequence_features(const Shape& in) const {
  if (in.size() != 2) {
    throw ConfigError(describe() + " needs a sequence input (steps, features), got " + format_shape(in));
  }
  return in[1];
}

Shape RecurrentLayer::recurrent_output_shape(const Shape& in) const {
  const RecurrentSettings s = recurrent();
  return s.return_sequences ? Shape{in[0], s.units} : Shape{s.units};
}

RecurrentLayer::Masks RecurrentLayer::dropout_masks(const at::Tensor& x) const {
  const RecurrentSettings s = recurrent();
  Masks m;
  if (is_training() && s.dropout > 0.0) m.input = dropout_mask(x.size(0), x.size(2), s.dropout, x.options());
  if (is_training() && s.recurrent_dropout > 0.0) {
    m.state = dropout_mask(x.size(0), s.units, s.recurrent_dropout, x.options());
  }
  return m;
}

at::Tensor RecurrentLayer::steps_input(const at::Tensor& x, const Masks& masks) const {
  const at::Tensor ordered = recurrent().go_backwards ? x.flip(1) : x;
  return masks.input.defined() ? ordered * masks.input.unsqueeze(1) : ordered;
}

at::Tensor RecurrentLayer::run_steps(const at::Tensor& xw, size_t states, const Step& step) const {
  const RecurrentSettings s = recurrent();
  std::vector<at::Tensor> state(states, at::zeros({xw.size(0), s.units}, xw.options()));
  std::vector<at::Tensor> outputs;
  at::Tensor h = state[0];
  for (int64_t t = 0; t < xw.size(1); ++t) {
    if (!masked()) {
      h = step(xw.select(1, t), state);
    } else {  // Keras's rnn() with a mask: where(mask, new, previous) for the output and each state
      const at::Tensor keep = steps_mask_.select(1, t).unsqueeze(1);
      const std::vector<at::Tensor> before = state;
      const at::Tensor out = step(xw.select(1, t), state);
      for (size_t k = 0; k < states; ++k) state[k] = at::where(keep, state[k], before[k]);
      h = at::where(keep, out, h);
    }
    if (s.return_sequences) outputs.push_back(h);
  }
  if (masked() && s.zero_output_for_mask) {
    const at::Tensor zero = at::zeros({}, xw.options());
    if (!s.return_sequences) return at::where(steps_mask_.select(1, xw.size(1) - 1).unsqueeze(1), h, zero);
    return at::where(steps_mask_.unsqueeze(2), at::stack(outputs, 1), zero);
  }
  return s.return_sequences ? at::stack(outputs, 1) : h;
}

int64_t RecurrentLayer::flops_per_sample() const {
  if (!built() || !kernel.defined()) return 0;
  return 2 * input_shape()[0] * (kernel.numel() + recurrent_kernel.numel());
}

at::Tensor RecurrentLayer::compute_mask(const std::vector<at::Tensor>&, const std::vector<at::Tensor>& masks) const {
  return recurrent().return_sequences && !masks.empty() ? masks[0] : at::Tensor();
}

at::Tensor RecurrentLayer::forward_masked(const std::vector<at::Tensor>& inputs, const std::vector<at::Tensor>& masks) {
  const at::Tensor& x = inputs.at(0);
  const at::Tensor& mask = masks.at(0);
  if (!mask.defined()) return forward(x);
  if (mask.dim() != 2 || x.dim() != 3 || mask.size(0) != x.size(0) || mask.size(1) != x.size(1)) {
    throw ConfigError(describe() + ": its mask must be (N, steps) = " + format_sizes({x.size(0), x.size(1)}) +
                      ", got " + format_sizes(mask.sizes().vec()));
  }
  const at::Tensor keep = mask.to(x.device(), at::kBool);
  steps_mask_ = recurrent().go_backwards ? keep.flip(1) : keep;
  struct Reset {
    at::Tensor& mask;
    ~Reset() { mask = at::Tensor(); }
  } reset{steps_mask_};
  return forward(x);
}

at::Tensor RecurrentLayer::sequence_output(const at::Tensor& y) const {
  return recurrent().return_sequences ? y : y.select(1, y.size(1) - 1);
}

// X (steps, N, C) → Y (steps, 1, N, units).
std::string RecurrentLayer::onnx_recurrent(io::OnnxGraph& g, const std::string& input, const std::string& op,
                                           const at::Tensor& w, const at::Tensor& r, const at::Tensor& b,
                                           std::vector<io::OnnxAttribute> attributes) const {
  using detail::onnx_name;
  const RecurrentSettings s = recurrent();
  if (s.go_backwards) throw ConfigError(describe() + ": ONNX export does not support go_backwards");
  const std::string x =
      g.add_node("Transpose", {input}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, onnx_name(*this, "to_steps_first"));
  const std::string wi = g.add_initializer(onnx_name(*this, "W"), w.contiguous());
  const std::string ri = g.add_initializer(onnx_name(*this, "R"), r.contiguous());
  const std::string bi = g.add_initializer(onnx_name(*this, "B"), b.contiguous());
  attributes.insert(attributes.begin(), io::OnnxAttribute{"hidden_size", s.units});
  const std::string y = g.add_node(op, {x, wi, ri, bi}, attributes, onnx_name(*this, op));
  const std::string y3 = g.add_node("Squeeze", {y, g.add_int64s(onnx_name(*this, "axis1"), {1})}, {},
                                    onnx_name(*this, "Squeeze"));  // (steps, N, units)
  if (s.return_sequences) {
    return g.add_node("Transpose", {y3}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, onnx_name(*this, "to_batch_first"));
  }
  const std::string last =
      g.add_node("Slice",
                 {y3, g.add_int64s(onnx_name(*this, "last"), {-1}), g.add_int64s(onnx_name(*this, "end"), {INT64_MAX}),
                  g.add_int64s(onnx_name(*this, "axis0"), {0})},
                 {}, onnx_name(*this, "last_step"));
  return g.add_node("Squeeze", {last, g.add_int64s(onnx_name(*this, "axis0_sq"), {0})}, {}, onnx_name(*this, "last"));
}

RecurrentLayer::OnnxRecurrentWeights RecurrentLayer::onnx_weights() const {
  throw ConfigError(describe() + ": its class has no ONNX recurrent node");
}

std::string RecurrentLayer::onnx_recurrent(io::OnnxGraph& g, const std::string& input) const {
  const OnnxRecurrentWeights o = onnx_weights();
  return onnx_recurrent(g, input, o.op, o.w, o.r, o.b, o.attributes);
}

void RecurrentLayer::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, bias.defined() ? 3 : 2);
  detail::assign_keras_weight(describe(), kernel, weights[0], "kernel");
  detail::assign_keras_weight(describe(), recurrent_kernel, weights[1], "recurrent_kernel");
  if (bias.defined()) detail::assign_keras_weight(describe(), bias, weights[2], "bias");
}

std::vector<at::Tensor> RecurrentLayer::keras_weights_impl() const {
  std::vector<at::Tensor> w = {detail::keras_weight_copy(kernel), detail::keras_weight_copy(recurrent_kernel)};
  if (bias.defined()) w.push_back(detail::keras_weight_copy(bias));
  return w;
}

}  // namespace torchfit
