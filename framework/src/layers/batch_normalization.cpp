#include <torchfit/layers/batch_normalization.h>

#include <torchfit/layers/registry.h>

#include <sstream>

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

TORCHFIT_REGISTER_LAYER(BatchNormalization);

}  // namespace torchfit
