#include <torchfit/layers/conv1d.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

Conv1DImpl::Conv1DImpl(Conv1DOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const auto positive = [this](int64_t v, const char* what) {
    if (v <= 0) throw ConfigError(describe() + ": " + what + " must be > 0, got " + std::to_string(v));
  };
  positive(options.filters(), "filters");
  positive((*options.kernel_size())[0], "kernel_size");
  positive((*options.strides())[0], "strides");
  positive((*options.dilation_rate())[0], "dilation_rate");
  const std::string& p = options.padding();
  if (p != "valid" && p != "same" && p != "causal")
    throw ConfigError(describe() + ": padding must be valid, same or causal, got '" + p + "'");
  check_activation(options.activation(), describe());
}

Shape Conv1DImpl::build_impl(const Shape& in) {
  if (in.size() != 2) throw ConfigError(describe() + " expects a sequence (steps, channels), got " + format_shape(in));
  const int64_t k = (*options.kernel_size())[0], s = (*options.strides())[0], d = (*options.dilation_rate())[0];
  const int64_t span = (k - 1) * d + 1;
  pad_before_ = pad_after_ = 0;
  if (options.padding() == "same") std::tie(pad_before_, pad_after_) = detail::same_padding(in[0], k, s, d);
  if (options.padding() == "causal") pad_before_ = span - 1;
  const int64_t padded = in[0] + pad_before_ + pad_after_;
  if (padded < span) {
    throw ConfigError(describe() + ": the window of " + std::to_string(span) + " steps is longer than the input " +
                      format_shape(in));
  }
  kernel = register_parameter("kernel",
                              detail::glorot_uniform({options.filters(), in[1], k}, k * in[1], k * options.filters()));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({options.filters()}));
  return {(padded - span) / s + 1, options.filters()};
}

at::Tensor Conv1DImpl::forward_without_activation(const at::Tensor& x) {
  at::Tensor channels_first = x.transpose(1, 2);  // (N, steps, C) → (N, C, steps)
  if (pad_before_ || pad_after_) channels_first = at::constant_pad_nd(channels_first, {pad_before_, pad_after_});
  const std::vector<int64_t> stride{(*options.strides())[0]}, padding{0}, dilation{(*options.dilation_rate())[0]};
  return at::conv1d(channels_first, kernel, bias, stride, padding, dilation).transpose(1, 2);
}

at::Tensor Conv1DImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x));
}

int64_t Conv1DImpl::flops_per_sample() const {
  if (!built()) return 0;
  return 2 * output_shape()[0] * kernel.numel();
}

// Keras: kernel (k, C_in, filters) ↔ torchfit (filters, C_in, k).
void Conv1DImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights, [&](const at::Tensor& k) {
    detail::expect_keras_weight_dims(who, k, 3, "kernel");
    return k.permute({2, 1, 0});
  });
}

std::vector<at::Tensor> Conv1DImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::keras_weight_copy(kernel.permute({2, 1, 0})), bias);
}

std::string Conv1DImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  // As a 2-D Conv over (N, C, 1, steps): OpenCV 4.6 gets a 1-D Conv's asymmetric pads wrong.
  const std::string image = detail::onnx_sequence_as_image(*this, g, in[0], input_shape()[0], input_shape()[1]);
  std::vector<std::string> ins{image, g.add_initializer(onnx_name(*this, "kernel"), kernel.unsqueeze(2))};
  if (bias.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "bias"), bias));
  const std::string y = g.add_node("Conv", ins,
                                   {{"kernel_shape", std::vector<int64_t>{1, kernel.size(2)}},
                                    {"strides", std::vector<int64_t>{1, (*options.strides())[0]}},
                                    {"dilations", std::vector<int64_t>{1, (*options.dilation_rate())[0]}},
                                    {"pads", std::vector<int64_t>{0, pad_before_, 0, pad_after_}}},
                                   onnx_name(*this, "Conv"));
  const std::string back = detail::onnx_image_as_sequence(*this, g, y, output_shape()[0], options.filters());
  return g.add_activation(options.activation(), back, name());
}

TORCHFIT_REGISTER_LAYER(Conv1D);

}  // namespace torchfit
