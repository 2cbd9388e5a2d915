#include <torchfit/layers/random_erasing.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <torchfit/layers/registry.h>

namespace torchfit {

void to_json(nlohmann::json& j, const ErasingFillValue& f) {
  if (f.values.empty()) {
    j = nullptr;
  } else {
    j = f.values.size() == 1 ? nlohmann::json(f.values[0]) : nlohmann::json(f.values);
  }
}

void from_json(const nlohmann::json& j, ErasingFillValue& f) {
  if (j.is_null()) {
    f.values.clear();
  } else if (j.is_number()) {
    f.values = {j.get<double>()};
  } else if (j.is_array() && j.size() == 3 && j[0].is_number() && j[1].is_number() && j[2].is_number()) {
    f.values = j.get<std::vector<double>>();
  } else {
    throw std::invalid_argument("must be null, a number or a list of three numbers");
  }
}

RandomErasingImpl::RandomErasingImpl(RandomErasingOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  range_ = keras_base_factor_range(options.factor(), describe(), 0.0, 1.0);  // _FACTOR_BOUNDS (0, 1)
  scale_ = keras_base_factor_range(options.scale(), describe(), 0.0, 1.0, "scale");
  // Keras takes a pair that only overlaps [0, 1]; a fraction above 1 erases the whole image, one below 0 has no
  // square root (nothing erased): both ends must be fractions (docs/data_pipeline.md).
  check_keras_factor(options.scale(), describe(), "scale", 0.0, 1.0);
  const auto& fills = options.fill_value().values;
  if (fills.size() == 2 || fills.size() > 3) {
    throw ConfigError(describe() + ": fill_value must be none, a number or three numbers, got " +
                      nlohmann::json(options.fill_value()).dump());
  }
  if (!std::all_of(fills.begin(), fills.end(), [](double v) { return std::isfinite(v); })) {
    KerasFactor given;  // formats one number or a list
    given.values = fills;
    throw ConfigError(describe() + ": fill_value must be finite, got " + format_factor(given));
  }
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::as_given);
}

Shape RandomErasingImpl::build_impl(const Shape& in) {
  const Shape out = ImageAugmentation::build_impl(in);
  if (options.fill_value().values.size() == 3 && in[2] != 3) {
    throw ConfigError(describe() + ": a fill_value of three numbers needs 3 channels, got " + format_shape(in));
  }
  return out;
}

ErasingDraws RandomErasingImpl::draw(const at::Tensor& x) const {
  const int64_t n = x.size(0);
  ErasingDraws d;  // Keras's order: mix_weight, the x start, the y start, the probability, the threshold, noise
  d.areas = uniform_draws(2 * n, scale_.first, scale_.second, x).view({n, 2});
  const at::Tensor ux = uniform_draws(n, 0.0, 1.0, x), uy = uniform_draws(n, 0.0, 1.0, x);
  d.starts = at::stack({ux, uy}, 1);
  const at::Tensor p = uniform_draws(n, range_.first, range_.second, x);
  d.applies = uniform_draws(n, 0.0, 1.0, x) < p;
  if (options.fill_value().values.empty()) {
    d.noise = at::randn(x.sizes(), at::TensorOptions().dtype(x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat))
                  .to(x.device());
  }
  return d;
}

at::Tensor RandomErasingImpl::erase(const at::Tensor& x, const ErasingDraws& d) const {
  const int64_t h = x.size(2), w = x.size(3);
  const at::Tensor ratio = d.areas.to(x.options()).sqrt(), start = d.starts.to(x.options());
  const at::Tensor cw = ratio.select(1, 0) * static_cast<double>(w), ch = ratio.select(1, 1) * static_cast<double>(h);
  const at::Tensor x0 = start.select(1, 0) * (static_cast<double>(w) - cw);
  const at::Tensor y0 = start.select(1, 1) * (static_cast<double>(h) - ch);
  const at::Tensor mask = box_masks(x0, x0 + cw, y0, y0 + ch, h, w);
  const auto& fill_value = options.fill_value().values;
  at::Tensor fill;
  if (fill_value.empty()) {
    fill = d.noise.to(x.options()) * value_range_.second;
  } else if (fill_value.size() == 1) {
    fill = at::full({1, 1, 1, 1}, fill_value[0], x.options());
  } else {
    fill = at::tensor(fill_value, x.options().dtype(at::kDouble)).to(x.scalar_type()).view({1, 3, 1, 1});
  }
  fill = fill.clamp(value_range_.first, value_range_.second);
  const at::Tensor erased = at::where(mask, fill.expand_as(x), x);
  return at::where(d.applies.to(x.device()).view({-1, 1, 1, 1}), erased, x);
}

TORCHFIT_REGISTER_LAYER(RandomErasing);

}  // namespace torchfit
