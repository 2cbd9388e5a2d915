#include <torchfit/layers/equalization.h>

#include <torchfit/layers/registry.h>

namespace torchfit {
namespace {

// Equalization._scale_values: values · scale + offset (applied for every value_range: Keras compares the
// sorted list to the tuple (0, 255), never equal; for [0, 255] it is the identity).
at::Tensor scale_values(const at::Tensor& v, std::pair<double, double> from, std::pair<double, double> to) {
  const double scale = (to.second - to.first) / (from.second - from.first);
  return v * scale + (to.first - from.first * scale);
}

}  // namespace

EqualizationImpl::EqualizationImpl(EqualizationOptions opts)
    : ImageAugmentation(keras_class_name, opts.name()), options(std::move(opts)) {
  set_declared_input_shape(options.input_shape());
  value_range_ = keras_value_range(options.value_range(), describe(), ValueRangeOrder::sorted);
  if (options.bins() < 1 || options.bins() > max_bins) {
    throw ConfigError(describe() + ": bins must be in [1, " + std::to_string(max_bins) + "], got " +
                      std::to_string(options.bins()));
  }
}

at::Tensor EqualizationImpl::equalize_channel(const at::Tensor& v) const {
  const int64_t bins = options.bins();
  // _custom_histogram_fixed_width: float32 values, (v − 0)·(bins − 1)/(255 − 0), cast to int32, clipped.
  const at::Tensor f = v.to(at::kFloat);
  const at::Tensor index = ((f - 0.0) * static_cast<double>(bins - 1) / 255.0).to(at::kInt).clamp(0, bins - 1);
  const at::Tensor hist = at::bincount(index.flatten().to(at::kLong), {}, bins);
  // _apply_equalization (tensor ops only: no host sync on a GPU).
  const at::Tensor cdf = hist.cumsum(0);
  const at::Tensor cdf_min = cdf.index_select(0, (hist > 0).to(at::kLong).argmax().view({1}));
  at::Tensor denominator = cdf.index_select(0, at::full({1}, bins - 1, cdf.options())) - cdf_min;
  denominator = at::where(denominator == 0, at::ones_like(denominator), denominator);
  const at::Tensor lut =
      ((cdf - cdf_min).to(at::kDouble) * 255.0 / denominator.to(at::kDouble)).round().clamp(0.0, 255.0);
  const at::Tensor lookup = ((v / 255.0) * static_cast<double>(bins - 1)).clamp(0.0, bins - 1.0).to(at::kInt);
  const at::Tensor equalized = lut.index_select(0, lookup.flatten().to(at::kLong)).view(v.sizes()).to(v.dtype());
  return at::where(at::count_nonzero(hist) <= 1, v, equalized);
}

at::Tensor EqualizationImpl::equalize(const at::Tensor& x) const {
  std::vector<at::Tensor> channels;
  for (int64_t c = 0; c < x.size(1); ++c) {
    const at::Tensor v = scale_values(x.select(1, c), value_range_, {0.0, 255.0});
    channels.push_back(scale_values(equalize_channel(v), {0.0, 255.0}, value_range_));
  }
  return at::stack(channels, 1);
}

TORCHFIT_REGISTER_LAYER(Equalization);

}  // namespace torchfit
