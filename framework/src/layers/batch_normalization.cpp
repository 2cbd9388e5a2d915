#include <torchfit/layers/batch_normalization.h>

#include <torchfit/layers/registry.h>

#include <sstream>

#include "layers/layer_export.h"

namespace torchfit {

BatchNormalizationImpl::BatchNormalizationImpl(BatchNormalizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  std::ostringstream os;
  if (!(options.momentum() >= 0.0 && options.momentum() < 1.0)) {
    os << describe() << ": momentum must be in [0, 1), got " << options.momentum();
    throw ConfigError(os.str());
  }
  if (!(options.epsilon() > 0.0)) {
    os << describe() << ": epsilon must be > 0, got " << options.epsilon();
    throw ConfigError(os.str());
  }
  if (options.axis_order() != "channels_last" && options.axis_order() != "channels_first") {
    throw ConfigError(describe() + ": axis_order \"" + options.axis_order() +
                      "\" is not channels_last or channels_first");
  }
}

// The axis resolved against the input as Keras does (tf.keras 2.x writes [1] after a Dense, [3] after a
// Conv2D); one axis only (Keras's several-axis form has parameters of the input's rank).
Shape BatchNormalizationImpl::build_impl(const Shape& in) {
  const auto axes = resolve_keras_axes(options.axis(), in, describe(), options.axis_order() == "channels_first");
  if (axes.size() != 1) {
    throw ConfigError(describe() + ": axis " + nlohmann::json(options.axis()).dump() + " names " +
                      std::to_string(axes.size()) + " axes of the input " + format_shape(in) +
                      "; normalisation over one axis only is supported (-1: the channels or features)");
  }
  tensor_axis_ = keras_to_tensor_axis(in, axes[0]);
  const int64_t c = in[static_cast<size_t>(axes[0] - 1)];
  if (options.scale()) gamma = register_parameter("gamma", at::ones({c}));
  if (options.center()) beta = register_parameter("beta", at::zeros({c}));
  moving_mean = register_parameter("moving_mean", at::zeros({c}), /*requires_grad=*/false);
  moving_variance = register_parameter("moving_variance", at::ones({c}), /*requires_grad=*/false);
  return in;
}

at::Tensor BatchNormalizationImpl::forward(const at::Tensor& x) {
  // A frozen BatchNormalization runs in inference mode (tf.keras >= 2.0: trainable = False).
  const bool training = is_training() && trainable();
  const int64_t t = tensor_axis_;
  if (training && x.numel() / std::max<int64_t>(x.size(t), 1) <= 1) {
    throw Error(describe() + ": a training batch needs more than one value per channel to compute a variance, got " +
                "a batch of shape " + format_sizes(x.sizes().vec()) +
                " — use batch_size >= 2, or call eval() to use the moving statistics");
  }
  // LibTorch normalises dim 1: another axis is moved there and back (views, no copy of the input).
  const at::Tensor in = t == 1 ? x : x.movedim(t, 1);
  const at::Tensor y = at::batch_norm(in, gamma, beta, moving_mean, moving_variance, training,
                                      /*momentum (LibTorch's, = 1 − Keras's)=*/1.0 - options.momentum(),
                                      options.epsilon(), /*cudnn_enabled=*/true);
  return t == 1 ? y : y.movedim(1, t);
}

// Keras 3.15's BatchNormalization._moments with a mask: the kept steps' mean and (biased) variance, each sum
// over Σ mask + 1e-7; the moving statistics move towards them by 1 − momentum.
at::Tensor BatchNormalizationImpl::forward_masked(const std::vector<at::Tensor>& inputs,
                                                  const std::vector<at::Tensor>& masks) {
  const at::Tensor& x = inputs.at(0);
  if (!(is_training() && trainable()) || !masks.at(0).defined()) return forward(x);
  const at::Tensor& m = masks[0];
  if (x.dim() != 3 || tensor_axis_ != 2 || m.dim() != 2 || m.size(0) != x.size(0) || m.size(1) != x.size(1)) {
    throw ConfigError(describe() +
                      ": a Keras mask is supported on a sequence (N, steps, features) normalised over "
                      "its features, got an input " +
                      format_sizes(x.sizes().vec()) + " with a mask " + format_sizes(m.sizes().vec()));
  }
  const at::Tensor keep = m.to(x.device(), at::kBool).unsqueeze(2).expand_as(x);
  const at::Tensor zero = at::zeros({}, x.options());
  const at::Tensor weight = keep.to(x.scalar_type()).sum(at::IntArrayRef{0, 1}) + 1e-7;
  const at::Tensor mean = at::where(keep, x, zero).sum(at::IntArrayRef{0, 1}) / weight;
  const at::Tensor variance = at::where(keep, x - mean, zero).square().sum(at::IntArrayRef{0, 1}) / weight;
  {
    at::NoGradGuard no_grad;
    const double k = options.momentum();
    moving_mean.mul_(k).add_(mean.detach().to(moving_mean.dtype()) * (1.0 - k));
    moving_variance.mul_(k).add_(variance.detach().to(moving_variance.dtype()) * (1.0 - k));
  }
  at::Tensor y = (x - mean) * at::rsqrt(variance + options.epsilon());
  if (gamma.defined()) y = y * gamma;
  return beta.defined() ? y + beta : y;
}

// Keras's arguments; axis_order only when it is not Keras 2's order.
nlohmann::json BatchNormalizationImpl::config() const {
  nlohmann::json c = base_config(options);
  if (options.axis_order() == "channels_last") c.erase("axis_order");
  return c;
}

int64_t BatchNormalizationImpl::flops_per_sample() const {
  if (!built()) return 0;
  return 2 * shape_numel(input_shape());
}

namespace {
// Keras's weight order: gamma (scale), beta (center), moving_mean, moving_variance (Keras 1: running_std,
// which holds the variance).
std::vector<std::pair<at::Tensor*, const char*>> batch_norm_keras_order(BatchNormalizationImpl& l) {
  std::vector<std::pair<at::Tensor*, const char*>> params;
  if (l.gamma.defined()) params.emplace_back(&l.gamma, "gamma");
  if (l.beta.defined()) params.emplace_back(&l.beta, "beta");
  params.emplace_back(&l.moving_mean, "moving_mean");
  params.emplace_back(&l.moving_variance, "moving_variance");
  return params;
}
}  // namespace

void BatchNormalizationImpl::set_keras_weights_impl(const std::vector<at::Tensor>& weights, const KerasWeightOptions&) {
  const auto params = batch_norm_keras_order(*this);
  detail::expect_keras_weight_count(describe(), weights, params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    detail::assign_keras_weight(describe(), *params[i].first, weights[i], params[i].second);
  }
}

std::vector<at::Tensor> BatchNormalizationImpl::keras_weights_impl() const {
  std::vector<at::Tensor> out;
  for (const auto& [param, what] : batch_norm_keras_order(const_cast<BatchNormalizationImpl&>(*this))) {
    out.push_back(detail::keras_weight_copy(*param));
  }
  return out;
}

std::string BatchNormalizationImpl::export_onnx(io::OnnxGraph& g, const std::vector<std::string>& in) const {
  using detail::onnx_name;
  const at::Tensor ones = at::ones_like(moving_mean), zeros = at::zeros_like(moving_mean);
  const std::vector<std::string> ins{in[0],
                                     g.add_initializer(onnx_name(*this, "gamma"), gamma.defined() ? gamma : ones),
                                     g.add_initializer(onnx_name(*this, "beta"), beta.defined() ? beta : zeros),
                                     g.add_initializer(onnx_name(*this, "moving_mean"), moving_mean),
                                     g.add_initializer(onnx_name(*this, "moving_variance"), moving_variance)};
  const int64_t t = tensor_axis();
  if (t == 1) {
    return g.add_node("BatchNormalization", ins, {{"epsilon", options.epsilon()}},
                      onnx_name(*this, "BatchNormalization"));
  }
  // ONNX normalises dim 1: the layer's axis is swapped there and back (a swap is its own inverse).
  std::vector<int64_t> perm(input_shape().size() + 1);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  std::swap(perm[1], perm[static_cast<size_t>(t)]);
  std::vector<std::string> moved = ins;
  moved[0] = g.add_node("Transpose", {in[0]}, {{"perm", perm}}, onnx_name(*this, "axis_to_1"));
  const std::string y =
      g.add_node("BatchNormalization", moved, {{"epsilon", options.epsilon()}}, onnx_name(*this, "BatchNormalization"));
  return g.add_node("Transpose", {y}, {{"perm", perm}}, onnx_name(*this, "axis_back"));
}

TORCHFIT_REGISTER_LAYER(BatchNormalization);

}  // namespace torchfit
