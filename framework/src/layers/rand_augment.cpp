#include <torchfit/layers/rand_augment.h>

#include <algorithm>

#include <torchfit/layers/registry.h>

namespace torchfit {

const std::vector<std::string>& RandAugmentImpl::operation_names() {
  static const std::vector<std::string> names = {
      "random_shear",    "random_translation", "random_rotation",      "random_brightness", "random_color_degeneration",
      "random_contrast", "random_sharpness",   "random_posterization", "solarization",      "auto_contrast",
      "equalization"};
  return names;
}

RandAugmentImpl::RandAugmentImpl(RandAugmentOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  const auto range = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  // Keras refuses a pair end outside [0, 1] in the operations it builds (RandomShear's x_factor, Solarization's
  // factors); here it is refused under RandAugment's own name.
  check_keras_factor(options.factor(), describe(), "factor", 0.0, 1.0);
  if (options.num_ops() < 0 || options.num_ops() > max_num_ops) {
    throw ConfigError(describe() + ": num_ops must be in [0, " + std::to_string(max_num_ops) + "], got " +
                      std::to_string(options.num_ops()) +
                      " (each operation is a pass over the batch; docs/data_pipeline.md)");
  }
  if (options.interpolation() != "bilinear" && options.interpolation() != "nearest") {
    throw ConfigError(describe() + ": interpolation must be 'nearest' or 'bilinear', got '" + options.interpolation() +
                      "'");
  }
  keras_value_range(options.value_range(), describe(), ValueRangeOrder::as_given);
  const KerasFactor f(range.first, range.second);
  const auto& vr = options.value_range();
  const std::string& ip = options.interpolation();
  // The operations as Keras's __init__ builds them (named after the layer, so that they take no automatic names).
  const std::string owner = name().empty() ? std::string("rand_augment") : name();
  const auto sub = [&](const std::string& op) { return owner + "_" + op; };
  shear_ = RandomShear(RandomShearOptions().x_factor(f).y_factor(f).interpolation(ip).name(sub("random_shear")));
  translation_ = RandomTranslation(RandomTranslationOptions(f, f).interpolation(ip).name(sub("random_translation")));
  rotation_ = RandomRotation(RandomRotationOptions(f).interpolation(ip).name(sub("random_rotation")));
  brightness_ = RandomBrightness(RandomBrightnessOptions(f).value_range(vr).name(sub("random_brightness")));
  color_degeneration_ =
      RandomColorDegeneration(RandomColorDegenerationOptions(f).value_range(vr).name(sub("random_color_degeneration")));
  contrast_ = RandomContrast(RandomContrastOptions(f).value_range(vr).name(sub("random_contrast")));
  sharpness_ = RandomSharpness(RandomSharpnessOptions(f).value_range(vr).name(sub("random_sharpness")));
  const double bits = std::max(1.0, static_cast<double>(static_cast<int64_t>(8.0 * range.second)));
  posterization_ =
      RandomPosterization(RandomPosterizationOptions(bits).value_range(vr).name(sub("random_posterization")));
  solarization_ = Solarization(
      SolarizationOptions().addition_factor(f).threshold_factor(f).value_range(vr).name(sub("solarization")));
  auto_contrast_ = AutoContrast(AutoContrastOptions().value_range(vr).name(sub("auto_contrast")));
  equalization_ = Equalization(EqualizationOptions().value_range(vr).name(sub("equalization")));
}

Shape RandAugmentImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  if (in[2] != 1 && in[2] != 3)
    throw ConfigError(describe() + " expects 1 or 3 channels (RGB or grayscale), got " + format_shape(in));
  return out;
}

at::Tensor RandAugmentImpl::draw_operations() const {
  const auto count = static_cast<int64_t>(operation_names().size());
  return at::randint(0, count, {options.num_ops()}, at::kLong);  // LibTorch's CPU generator
}

at::Tensor RandAugmentImpl::draw_operation(int64_t index, const at::Tensor& x) {
  const int64_t n = x.size(0);
  switch (index) {
    case 0:
      return shear_->draw_transforms(x);
    case 1:
      return translation_->draw_transforms(x);
    case 2:
      return rotation_->draw_transforms(x);
    case 3:
      return brightness_->draw_deltas(n, x);
    case 4:
      return color_degeneration_->draw_factors(n, x);
    case 5:
      return contrast_->draw_factors(n, x);
    case 6:
      return sharpness_->draw_factors(n, x);
    case 7:
      return posterization_->draw_bits(n, x);
    case 8:
      return solarization_->draw_parameters(n, x);
    default:
      return {};  // AutoContrast, Equalization: no draws
  }
}

at::Tensor RandAugmentImpl::apply_operation(int64_t index, const at::Tensor& x, const at::Tensor& drawn) const {
  switch (index) {
    case 0:
      return shear_->transform_images(x, drawn);
    case 1:
      return translation_->transform_images(x, drawn);
    case 2:
      return rotation_->transform_images(x, drawn);
    case 3:
      return brightness_->adjust(x, drawn);
    case 4:
      return color_degeneration_->degenerate(x, drawn);
    case 5:
      return contrast_->adjust(x, drawn);
    case 6:
      return sharpness_->sharpen(x, drawn);
    case 7:
      return posterization_->posterize(x, drawn);
    case 8:
      return solarization_->solarize(x, drawn);
    case 9:
      return auto_contrast_.ptr()->forward(x);
    case 10:
      return equalization_->equalize(x);
    default:
      throw ConfigError(describe() + ": no operation " + std::to_string(index) + " (0 to 10)");
  }
}

at::Tensor RandAugmentImpl::augment(const at::Tensor& x) {
  // Keras: the operation indices first, then every operation's transformation, in _AUGMENT_LAYERS order.
  const at::Tensor picked = draw_operations();
  std::vector<at::Tensor> drawn;
  for (size_t i = 0; i < operation_names().size(); ++i) drawn.push_back(draw_operation(static_cast<int64_t>(i), x));
  at::Tensor y = x;
  const auto* ops = picked.data_ptr<int64_t>();
  for (int64_t i = 0; i < picked.numel(); ++i) y = apply_operation(ops[i], y, drawn[static_cast<size_t>(ops[i])]);
  return y;
}

TORCHFIT_REGISTER_LAYER(RandAugment);

}  // namespace torchfit
