#include <torchfit/layers/einsum_dense.h>

#include <algorithm>
#include <regex>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

void to_json(nlohmann::json& j, const EinsumOutputShape& s) {
  j = nlohmann::json::array();
  for (const auto& d : s.dims) j.push_back(d ? nlohmann::json(*d) : nlohmann::json(nullptr));
}

void from_json(const nlohmann::json& j, EinsumOutputShape& s) {
  s.dims.clear();
  if (j.is_number_integer()) {
    s.dims.push_back(j.get<int64_t>());
    return;
  }
  if (!j.is_array()) throw std::invalid_argument("output_shape must be an integer or a list of integers and nulls");
  for (const auto& e : j) {
    if (!e.is_null() && !e.is_number_integer()) throw std::invalid_argument("output_shape entries: integers or null");
    s.dims.push_back(e.is_null() ? std::nullopt : std::optional<int64_t>(e.get<int64_t>()));
  }
}

namespace {

// The equation's parts as Keras's _analyze_einsum_string splits them ("..." replaced by "0").
struct EinsumSpec {
  std::string input, kernel, output;
  bool left_elided = false, right_elided = false;
};

EinsumSpec split_equation(const std::string& equation, const std::string& who) {
  const std::string s = std::regex_replace(equation, std::regex(R"(\.\.\.)"), "0");
  std::smatch m;
  EinsumSpec e;
  if (std::regex_match(s, m, std::regex("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)"))) {
  } else if (std::regex_match(s, m, std::regex("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)"))) {
    e.left_elided = true;
  } else if (std::regex_match(s, m, std::regex("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0"))) {
    e.right_elided = true;
  } else {
    throw ConfigError(who + ": equation '" + equation +
                      "' is not of the form [X],[Y]->[Z], ...[X],[Y]->...[Z] or [X]...,[Y]->[Z]...");
  }
  e.input = m[1];
  e.kernel = m[2];
  e.output = m[3];
  return e;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// Keras's _analyze_split_string: the full output shape (batch first, −1) and the kernel and bias shapes.
// One difference: the axes a leading "..." stands for keep their order in the output (Keras inserts them
// reversed into its reported shape when there are more than two; the einsum itself keeps them in order).
struct EinsumShapes {
  Shape output, kernel, bias;
};

EinsumShapes analyze(const EinsumSpec& e, const EinsumOutputShape& partial, const Shape& in, const std::string& who,
                     const std::optional<std::string>& bias_axes) {
  Shape input{-1};
  input.insert(input.end(), in.begin(), in.end());
  const int64_t elided = static_cast<int64_t>(input.size()) - static_cast<int64_t>(e.input.size());
  const bool elides = e.left_elided || e.right_elided;
  if (elided < 0 || (e.left_elided && elided < 1) || (!elides && elided != 0)) {
    throw ConfigError(who + ": the input " + format_shape(in) + " does not have the axes of the equation's '" +
                      e.input + "'" + (elides ? " and \"...\"" : ""));
  }
  const size_t want = e.output.size() - (e.left_elided ? 0 : 1);
  if (partial.dims.size() != want) {
    throw ConfigError(who + ": output_shape " + nlohmann::json(partial).dump() + " must have " + std::to_string(want) +
                      " entries for the output '" + e.output + "'");
  }
  if (!e.left_elided && (e.input[0] != e.output[0] || has(e.kernel, e.input[0]))) {
    throw ConfigError(who + ": the equation's first input letter '" + std::string(1, e.input[0]) +
                      "' is the batch: it must be the output's first and not the kernel's");
  }
  std::vector<std::optional<int64_t>> out(partial.dims);
  out.insert(out.begin(), std::optional<int64_t>(-1));
  if (e.left_elided) out.insert(out.begin() + 1, input.begin() + 1, input.begin() + elided);
  if (e.right_elided) out.insert(out.end(), input.end() - elided, input.end());
  const int64_t in_offset = e.left_elided ? elided : 0;
  const auto in_size = [&](char c) { return input[static_cast<size_t>(in_offset) + e.input.find(c)]; };
  const auto out_at = [&](char c) -> std::optional<int64_t>& {
    return out[static_cast<size_t>(in_offset) + e.output.find(c)];
  };
  for (char c : e.output) {
    if (!has(e.input, c) && !has(e.kernel, c)) {
      throw ConfigError(who + ": output letter '" + std::string(1, c) + "' is in neither the input nor the kernel");
    }
    std::optional<int64_t>& o = out_at(c);
    if (has(e.input, c)) {
      if (o && *o != in_size(c)) {
        throw ConfigError(who + ": output_shape " + std::to_string(*o) + " at '" + std::string(1, c) +
                          "' is not the input's " + std::to_string(in_size(c)) + " (input " + format_shape(in) + ")");
      }
      o = in_size(c);
    } else if (!o) {
      throw ConfigError(who + ": output_shape leaves the kernel's size of '" + std::string(1, c) + "' unknown (null)");
    }
  }
  EinsumShapes r;
  for (const auto& o : out) r.output.push_back(*o);
  for (char c : e.kernel) {
    if (!has(e.input, c) && !has(e.output, c)) {
      throw ConfigError(who + ": kernel letter '" + std::string(1, c) + "' is in neither the input nor the output");
    }
    r.kernel.push_back(has(e.input, c) ? in_size(c) : *out_at(c));
  }
  if (!bias_axes) return r;
  size_t first = e.output.size();
  for (char c : *bias_axes) {
    if (!has(e.output, c)) {
      throw ConfigError(who + ": bias_axes letter '" + std::string(1, c) + "' is not in the output '" + e.output + "'");
    }
    first = std::min(first, e.output.find(c));
  }
  if (bias_axes->empty()) throw ConfigError(who + ": bias_axes must name output letters or be null, got \"\"");
  for (size_t i = first; i < e.output.size(); ++i)
    r.bias.push_back(has(*bias_axes, e.output[i]) ? *out_at(e.output[i]) : 1);
  if (e.right_elided) r.bias.insert(r.bias.end(), static_cast<size_t>(elided), 1);
  return r;
}

// Keras's compute_fans of a kernel shape (glorot_uniform).
std::pair<int64_t, int64_t> fans(const Shape& s) {
  if (s.size() == 1) return {s[0], s[0]};
  int64_t receptive = 1;
  for (size_t i = 0; i + 2 < s.size(); ++i) receptive *= s[i];
  return {s[s.size() - 2] * receptive, s.back() * receptive};
}

}  // namespace

EinsumDenseImpl::EinsumDenseImpl(EinsumDenseOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  split_equation(options.equation(), describe());
  for (const auto& d : options.output_shape().dims) {
    if (d && *d <= 0)
      throw ConfigError(describe() + ": output_shape entries must be > 0 or null, got " + std::to_string(*d));
  }
  check_activation(options.activation(), describe());
}

Shape EinsumDenseImpl::build_impl(const Shape& in) {
  const EinsumShapes s = analyze(split_equation(options.equation(), describe()), options.output_shape(), in, describe(),
                                 options.bias_axes());
  const auto [fan_in, fan_out] = fans(s.kernel);
  kernel = register_parameter("kernel", detail::glorot_uniform(s.kernel, fan_in, fan_out));
  if (options.bias_axes()) bias = register_parameter("bias", at::zeros(s.bias));
  return Shape(s.output.begin() + 1, s.output.end());
}

at::Tensor EinsumDenseImpl::forward_without_activation(const at::Tensor& x) {
  at::Tensor y = at::einsum(options.equation(), {x.dim() == 4 ? x.movedim(1, -1) : x, kernel});
  if (bias.defined()) y = y + bias;
  return y.dim() == 4 ? y.movedim(-1, 1) : y;
}

at::Tensor EinsumDenseImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json EinsumDenseImpl::config() const { return base_config(options); }

void EinsumDenseImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  detail::expect_keras_weight_count(describe(), weights, bias.defined() ? 2 : 1);
  detail::assign_keras_weight(describe(), kernel, weights[0], "kernel");
  if (bias.defined()) detail::assign_keras_weight(describe(), bias, weights[1], "bias");
}

std::vector<at::Tensor> EinsumDenseImpl::keras_weights_impl() const {
  std::vector<at::Tensor> w{detail::keras_weight_copy(kernel)};
  if (bias.defined()) w.push_back(detail::keras_weight_copy(bias));
  return w;
}

std::string EinsumDenseImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  std::string x = in[0];
  if (input_shape().size() == 3) {
    x = g.add_node("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}, onnx_name(*this, "to_keras"));
  }
  std::string y = g.add_node("Einsum", {x, g.add_initializer(onnx_name(*this, "kernel"), kernel)},
                             {{"equation", options.equation()}}, onnx_name(*this, "Einsum"));
  if (bias.defined())
    y = g.add_node("Add", {y, g.add_initializer(onnx_name(*this, "bias"), bias)}, {}, onnx_name(*this, "Add"));
  if (output_shape().size() == 3) {
    y = g.add_node("Transpose", {y}, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}, onnx_name(*this, "to_image"));
  }
  return g.add_activation(options.activation(), y, name());
}

TORCHFIT_REGISTER_LAYER(EinsumDense);

}  // namespace torchfit
