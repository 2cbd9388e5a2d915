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
}

Shape BatchNormalizationImpl::build_impl(const Shape& in) {
  if (in.size() != 1 && in.size() != 3) {
    throw ConfigError(describe() + " expects an input (H, W, C) or (D), got " + format_shape(in));
  }
  const int64_t c = in.back();
  if (options.scale()) gamma = register_parameter("gamma", at::ones({c}));
  if (options.center()) beta = register_parameter("beta", at::zeros({c}));
  moving_mean = register_parameter("moving_mean", at::zeros({c}), /*requires_grad=*/false);
  moving_variance = register_parameter("moving_variance", at::ones({c}), /*requires_grad=*/false);
  return in;
}

at::Tensor BatchNormalizationImpl::forward(const at::Tensor& x) {
  // A frozen BatchNormalization runs in inference mode (tf.keras >= 2.0: trainable = False).
  const bool training = is_training() && trainable();
  if (training && x.numel() / std::max<int64_t>(x.size(1), 1) <= 1) {
    throw Error(describe() + ": a training batch needs more than one value per channel to compute a variance, got " +
                "a batch of shape " + format_sizes(x.sizes().vec()) +
                " — use batch_size >= 2, or call eval() to use the moving statistics");
  }
  return at::batch_norm(x, gamma, beta, moving_mean, moving_variance, training,
                        /*momentum (LibTorch's, = 1 − Keras's)=*/1.0 - options.momentum(), options.epsilon(),
                        /*cudnn_enabled=*/true);
}

nlohmann::json BatchNormalizationImpl::config() const { return base_config(options); }

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
  return g.add_node("BatchNormalization", ins, {{"epsilon", options.epsilon()}},
                    onnx_name(*this, "BatchNormalization"));
}

TORCHFIT_REGISTER_LAYER(BatchNormalization);

}  // namespace torchfit
