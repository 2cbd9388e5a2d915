#include <torchfit/layers/random_color_jitter.h>

#include <torchfit/layers/registry.h>

namespace torchfit {
namespace {

// The step `Impl` for `factor` (nullptr for none), named after its argument; its ConfigError named this layer.
template <typename Impl, typename Options>
std::shared_ptr<Impl> jitter_step(const std::optional<KerasFactor>& factor, const char* argument,
                                  const std::vector<double>& value_range, const std::string& who) {
  if (!factor) return nullptr;
  try {
    return std::make_shared<Impl>(Options(*factor).value_range(value_range).name(argument));
  } catch (const ConfigError& e) {
    throw ConfigError(who + ": " + e.what());
  }
}

}  // namespace

RandomColorJitterImpl::RandomColorJitterImpl(RandomColorJitterOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  keras_value_range(options.value_range(), describe(), ValueRangeOrder::as_given);
  const auto& v = options.value_range();
  brightness_ = jitter_step<RandomBrightnessImpl, RandomBrightnessOptions>(options.brightness_factor(),
                                                                           "brightness_factor", v, describe());
  contrast_ = jitter_step<RandomContrastImpl, RandomContrastOptions>(options.contrast_factor(), "contrast_factor", v,
                                                                     describe());
  saturation_ = jitter_step<RandomSaturationImpl, RandomSaturationOptions>(options.saturation_factor(),
                                                                           "saturation_factor", v, describe());
  hue_ = jitter_step<RandomHueImpl, RandomHueOptions>(options.hue_factor(), "hue_factor", v, describe());
}

Shape RandomColorJitterImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  if (saturation_ || hue_) check_rgb_input(in, describe());
  return out;
}

at::Tensor RandomColorJitterImpl::augment(const at::Tensor& x) {
  const int64_t n = x.size(0);
  at::Tensor y = x;  // Keras's order: brightness, contrast, saturation, hue
  if (brightness_) y = brightness_->adjust(y, brightness_->draw_deltas(n, y));
  if (contrast_) y = contrast_->adjust(y, contrast_->draw_factors(n, y));
  if (saturation_) y = saturation_->adjust(y, saturation_->draw_factors(n, y));
  if (hue_) y = hue_->adjust(y, hue_->draw_deltas(n, y));
  return y;
}

TORCHFIT_REGISTER_LAYER(RandomColorJitter);

}  // namespace torchfit
