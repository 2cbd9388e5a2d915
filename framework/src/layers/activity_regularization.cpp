#include <torchfit/layers/activity_regularization.h>

#include <torchfit/layers/registry.h>

namespace torchfit {

ActivityRegularizationImpl::ActivityRegularizationImpl(ActivityRegularizationOptions opts)
    : Layer(keras_class_name, opts.name()), options(std::move(opts)) {
  if (!(options.l1() >= 0.0) || !(options.l2() >= 0.0)) {
    throw ConfigError(describe() + ": l1 and l2 must be >= 0, got l1 " + std::to_string(options.l1()) + ", l2 " +
                      std::to_string(options.l2()));
  }
  set_activity_regularizer(Regularizer{options.l1(), options.l2()});
  set_declared_input_shape(options.input_shape());
}

nlohmann::json ActivityRegularizationImpl::config() const {
  nlohmann::json c = base_config(options);
  c.erase("activity_regularizer");
  return c;
}

std::string ActivityRegularizationImpl::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const {
  return in[0];
}

TORCHFIT_REGISTER_LAYER(ActivityRegularization);

}  // namespace torchfit
