#include <torchfit/layers/solarization.h>

#include <torchfit/layers/registry.h>

namespace torchfit {
namespace {

// Solarization._set_factor: each number in [0, 1]; a number f gives (0, f), a pair is sorted.
std::pair<double, double> solarization_factor(const KerasFactor& f, const std::string& who, const std::string& field) {
  check_keras_factor(f, who, field, 0.0, 1.0);
  if (f.values.size() == 1) return {0.0, f.values[0]};
  return keras_factor_range(f);
}

}  // namespace

SolarizationImpl::SolarizationImpl(SolarizationOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  addition_ = solarization_factor(options.addition_factor(), describe(), "addition_factor");
  threshold_ = solarization_factor(options.threshold_factor(), describe(), "threshold_factor");
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

at::Tensor SolarizationImpl::draw_parameters(int64_t n, const at::Tensor& like) const {
  // Keras: uniform(minval=factor[0], maxval=factor[1] * 255), the additions drawn before the thresholds.
  const at::Tensor additions = uniform_draws(n, addition_.first, addition_.second * 255.0, like);
  const at::Tensor thresholds = uniform_draws(n, threshold_.first, threshold_.second * 255.0, like);
  return at::stack({additions, thresholds}, 1);
}

at::Tensor SolarizationImpl::solarize(const at::Tensor& x, const at::Tensor& parameters) const {
  const at::Tensor p = parameters.to(x.options());
  const at::Tensor additions = p.select(1, 0).view({-1, 1, 1, 1}), thresholds = p.select(1, 1).view({-1, 1, 1, 1});
  const at::Tensor r = (transform_value_range(x, value_range_, {0.0, 255.0}) + additions).clamp(0.0, 255.0);
  return transform_value_range(at::where(r < thresholds, r, 255.0 - r), {0.0, 255.0}, value_range_);
}

TORCHFIT_REGISTER_LAYER(Solarization);

}  // namespace torchfit
