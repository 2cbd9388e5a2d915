#include <torchfit/layers/random_posterization.h>

#include <cmath>

#include <torchfit/layers/registry.h>

namespace torchfit {

RandomPosterizationImpl::RandomPosterizationImpl(RandomPosterizationOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 1.0, 8.0);  // _FACTOR_BOUNDS (1, 8)
  const bool whole = std::floor(range_.first) == range_.first && std::floor(range_.second) == range_.second;
  const bool fits = range_.first >= 0.0 && range_.second <= (range_.first == range_.second ? 8.0 : 9.0);
  if (!whole || !fits) {
    throw ConfigError(describe() +
                      ": factor must hold integers whose draws keep 0 to 8 bits (randint(lower, upper) "
                      "with 0 <= lower and upper <= 9, or lower = upper <= 8), got " +
                      format_factor(options.factor()));
  }
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
}

at::Tensor RandomPosterizationImpl::draw_bits(int64_t n, const at::Tensor& like) const {
  const auto lo = static_cast<int64_t>(range_.first), hi = static_cast<int64_t>(range_.second);
  // LibTorch's CPU generator (the one a checkpoint saves), then the batch's device.
  const at::Tensor bits = lo == hi ? at::full({n}, lo, at::kLong) : at::randint(lo, hi, {n}, at::kLong);
  return bits.to(like.device());
}

at::Tensor RandomPosterizationImpl::posterize(const at::Tensor& x, const at::Tensor& bits) const {
  const at::Tensor shift = (8 - bits.to(x.device(), at::kLong)).view({-1, 1, 1, 1});
  const at::Tensor bytes = transform_value_range(x, value_range_, {0.0, 255.0}).to(at::kByte).to(at::kLong);
  const at::Tensor kept = at::bitwise_left_shift(at::bitwise_right_shift(bytes, shift), shift).to(at::kByte);
  return transform_value_range(kept.to(x.scalar_type()), {0.0, 255.0}, value_range_);
}

TORCHFIT_REGISTER_LAYER(RandomPosterization);

}  // namespace torchfit
