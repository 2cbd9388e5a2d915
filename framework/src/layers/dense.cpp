#include <torchfit/layers/dense.h>

#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/registry.h>

#include "layers/dense_weight_grad.h"
#include "layers/init.h"
#include "layers/layer_export.h"

namespace torchfit {

DenseImpl::DenseImpl(DenseOptions opts) : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  if (options.units() <= 0) {
    throw ConfigError(describe() + ": units must be > 0, got " + std::to_string(options.units()));
  }
  check_activation(options.activation(), describe());
}

Shape DenseImpl::build_impl(const Shape& in) {
  if (in.empty()) throw ConfigError(describe() + " needs an input with at least one axis, got " + format_shape(in));
  const int64_t d = in.back();  // Keras's last axis: an image's channels (tensor dim 1)
  kernel = register_parameter("kernel", detail::glorot_uniform({options.units(), d}, d, options.units()));
  if (options.use_bias()) bias = register_parameter("bias", at::zeros({options.units()}));
  Shape out = in;
  out.back() = options.units();
  return out;
}

// The kernel applies to Keras's last axis: the tensor's last dim, but an image's channels (dim 1). The
// leading dims are folded into rows so that every rank takes linear_train's 2-D path.
at::Tensor DenseImpl::forward_without_activation(const at::Tensor& x) {
  if (x.dim() == 2) return detail::linear_train(x, kernel, bias);
  const bool image = x.dim() == 4;
  const at::Tensor last = image ? x.movedim(1, -1) : x;
  std::vector<int64_t> sizes = last.sizes().vec();
  sizes.back() = options.units();
  const at::Tensor y = detail::linear_train(last.reshape({-1, kernel.size(1)}), kernel, bias).view(sizes);
  return image ? y.movedim(-1, 1) : y;
}

at::Tensor DenseImpl::forward(const at::Tensor& x) {
  return apply_activation(options.activation(), forward_without_activation(x), /*inplace=*/true);
}

nlohmann::json DenseImpl::config() const { return base_config(options); }

int64_t DenseImpl::flops_per_sample() const {
  if (!built()) return 0;
  int64_t positions = 1;  // every position of the input but the last axis
  for (size_t i = 0; i + 1 < input_shape().size(); ++i) positions *= input_shape()[i];
  return 2 * positions * input_shape().back() * options.units();
}

// Keras: kernel (D, units) → (units, D), bias (units). The rows apply as stored: torchfit's Flatten gives
// Keras's (H, W, C) order (flatten.h).
void DenseImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  const std::string who = describe();
  detail::set_kernel_and_bias(who, kernel, bias, weights, [&](const at::Tensor& k) {
    detail::expect_keras_weight_dims(who, k, 2, "kernel");
    return k.t();
  });
}

std::vector<at::Tensor> DenseImpl::keras_weights_impl() const {
  return detail::kernel_and_bias_to_keras(detail::keras_weight_copy(kernel.t()), bias);
}

std::string DenseImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const size_t rank = input_shape().size();
  std::string y;
  if (rank == 1) {  // y = x·Wᵀ + b
    std::vector<std::string> ins{in[0], g.add_initializer(onnx_name(*this, "kernel"), kernel)};
    if (bias.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "bias"), bias));
    y = g.add_node("Gemm", ins, {{"transB", 1}}, onnx_name(*this, "Gemm"));
  } else if (rank == 3) {  // an image's channels: a 1×1 convolution of (N, C, H, W)
    std::vector<std::string> ins{
        in[0], g.add_initializer(onnx_name(*this, "kernel"), kernel.view({kernel.size(0), kernel.size(1), 1, 1}))};
    if (bias.defined()) ins.push_back(g.add_initializer(onnx_name(*this, "bias"), bias));
    y = g.add_node("Conv", ins, {{"kernel_shape", std::vector<int64_t>{1, 1}}}, onnx_name(*this, "Conv"));
  } else {  // the last axis of (N, ..., D): MatMul by Wᵀ (D, units), then + b
    y = g.add_node("MatMul", {in[0], g.add_initializer(onnx_name(*this, "kernel"), kernel.t().contiguous())}, {},
                   onnx_name(*this, "MatMul"));
    if (bias.defined())
      y = g.add_node("Add", {y, g.add_initializer(onnx_name(*this, "bias"), bias)}, {}, onnx_name(*this, "Add"));
  }
  return g.add_activation(options.activation(), y, name());
}

TORCHFIT_REGISTER_LAYER(Dense);

}  // namespace torchfit
