#include <torchfit/layers/image_augmentation.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <torchfit/layers/affine_transform.h>

namespace torchfit {
namespace {

std::string augmentation_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

void to_json(nlohmann::json& j, const KerasFactor& f) {
  j = f.values.size() == 1 ? nlohmann::json(f.values[0]) : nlohmann::json(f.values);
}

void from_json(const nlohmann::json& j, KerasFactor& f) {
  if (j.is_number()) {
    f.values = {j.get<double>()};
    return;
  }
  if (j.is_array() && j.size() == 2 && j[0].is_number() && j[1].is_number()) {
    f.values = {j[0].get<double>(), j[1].get<double>()};
    return;
  }
  throw std::invalid_argument("must be a number or a list of two numbers");
}

std::string format_factor(const KerasFactor& f) {
  if (f.values.size() == 1) return augmentation_number(f.values[0]);
  std::string s = "[";
  for (size_t i = 0; i < f.values.size(); ++i) s += (i ? ", " : "") + augmentation_number(f.values[i]);
  return s + "]";
}

std::pair<double, double> keras_factor_range(const KerasFactor& f) {
  if (f.values.size() == 1) return {-std::abs(f.values[0]), std::abs(f.values[0])};
  return {std::min(f.values[0], f.values[1]), std::max(f.values[0], f.values[1])};
}

void check_keras_factor(const KerasFactor& f, const std::string& who, const std::string& field, double lo, double hi,
                        bool lo_open) {
  bool ok = f.values.size() == 1 || f.values.size() == 2;
  for (double v : f.values) ok = ok && std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (!ok) {
    throw ConfigError(who + ": " + field + " must be a number or a pair of numbers in " + (lo_open ? "(" : "[") +
                      augmentation_number(lo) + ", " + augmentation_number(hi) + "], got " + format_factor(f));
  }
}

std::pair<double, double> keras_base_factor_range(const KerasFactor& f, const std::string& who, double lo, double hi,
                                                  const std::string& field) {
  const auto& v = f.values;
  bool ok = v.size() == 1 || v.size() == 2;
  for (double e : v) ok = ok && std::isfinite(e);
  if (ok) ok = v.size() == 1 ? v[0] >= lo && v[0] <= hi : !(v[0] > hi || v[1] < lo);
  if (!ok) {
    throw ConfigError(who + ": " + field + " must be a number in [" + augmentation_number(lo) + ", " +
                      augmentation_number(hi) + "] or a pair [lower, upper] with lower <= " + augmentation_number(hi) +
                      " and upper >= " + augmentation_number(lo) + ", got " + format_factor(f));
  }
  if (v.size() == 2) return keras_factor_range(f);
  return {std::max(-std::abs(v[0]), lo), std::abs(v[0])};
}

at::Tensor uniform_draws(int64_t n, double lo, double hi, const at::Tensor& like) {
  const auto dtype = like.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  // LibTorch's CPU generator (the one a checkpoint saves, training/ resumes), then the batch's device.
  const at::Tensor u = at::rand({n}, at::TensorOptions().dtype(dtype)) * (hi - lo) + lo;
  return u.to(like.device());
}

std::pair<double, double> keras_value_range(const std::vector<double>& v, const std::string& who,
                                            ValueRangeOrder order) {
  std::string given = "[";
  for (size_t i = 0; i < v.size(); ++i) given += (i ? ", " : "") + augmentation_number(v[i]);
  given += "]";
  const std::string field = who + ": value_range must be ";
  if (v.size() != 2) throw ConfigError(field + "two numbers [low, high], got " + given);
  if (!std::isfinite(v[0]) || !std::isfinite(v[1])) {
    throw ConfigError(field + "two finite numbers [low, high], got " + given);
  }
  if (order == ValueRangeOrder::as_given && v[0] > v[1]) {
    throw ConfigError(field + "[low, high] with low < high, got " + given);
  }
  if (v[0] == v[1]) {
    throw ConfigError(field + "two different numbers [low, high] (an empty range maps every value to one point), got " +
                      given);
  }
  return {std::min(v[0], v[1]), std::max(v[0], v[1])};
}

namespace {

// log X of X ~ Gamma(a): Gamma(a + 1)·U^(1/a) (Marsaglia & Tsang's boost), U in (0, 1], in logarithms.
at::Tensor log_gamma_draws(int64_t n, double a) {
  const at::Tensor g = at::_standard_gamma(at::full({n}, a + 1.0, at::TensorOptions().dtype(at::kDouble)));
  const at::Tensor u = 1.0 - at::rand({n}, at::TensorOptions().dtype(at::kDouble));
  return g.log() + u.log() / a;
}

at::Tensor keep_where(const at::Tensor& condition, const at::Tensor& a, double otherwise) {
  return a.masked_fill(condition.logical_not(), otherwise);
}

}  // namespace

at::Tensor beta_draws(int64_t n, double a, double b, const at::Tensor& like) {
  const auto dtype = like.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor la = log_gamma_draws(n, a), lb = log_gamma_draws(n, b);
  const at::Tensor top = at::max(la, lb);
  const at::Tensor ea = (la - top).exp(), eb = (lb - top).exp();
  return (ea / (ea + eb)).to(like.device(), dtype);
}

at::Tensor permutation_draws(int64_t n, const at::Tensor& like) {
  return at::randperm(n, at::TensorOptions().dtype(at::kLong)).to(like.device());
}

at::Tensor box_masks(const at::Tensor& x0, const at::Tensor& x1, const at::Tensor& y0, const at::Tensor& y1,
                     int64_t height, int64_t width) {
  const at::Tensor gx = at::arange(width, x0.options()).view({1, 1, 1, -1});
  const at::Tensor gy = at::arange(height, y0.options()).view({1, 1, -1, 1});
  const auto col = [](const at::Tensor& t) { return t.view({-1, 1, 1, 1}); };
  return (gx >= col(x0)).logical_and(gx < col(x1)).logical_and(gy >= col(y0)).logical_and(gy < col(y1));
}

void check_mix_labels(const at::Tensor& labels, int64_t n, const std::string& who) {
  if (labels.defined() && labels.is_floating_point() && labels.dim() == 2 && labels.size(0) == n) return;
  std::ostringstream os;
  os << who << ": labels must be (N, K) floating point (one-hot or soft labels) for the N = " << n << " images, got ";
  if (labels.defined()) {
    os << labels.scalar_type() << " " << labels.sizes();
  } else {
    os << "none";
  }
  throw ConfigError(os.str());
}

void check_rgb_input(const Shape& in, const std::string& who) {
  if (in[2] != 3) throw ConfigError(who + " expects 3 channels (RGB), got " + format_shape(in));
}

at::Tensor rgb_to_hsv(const at::Tensor& images) {
  const double eps = images.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                         : std::numeric_limits<float>::epsilon();
  const at::Tensor x = images.masked_fill(images.abs() < eps, 0.0);
  const at::Tensor r = x.select(1, 0), g = x.select(1, 1), b = x.select(1, 2);
  const at::Tensor value = at::max(at::max(r, g), b);
  const at::Tensor range = value - at::min(at::min(r, g), b);
  const at::Tensor safe_value = keep_where(value > 0, value, 1.0), safe_range = keep_where(range > 0, range, 1.0);
  const at::Tensor saturation = keep_where(value > 0, range / safe_value, 0.0);
  const at::Tensor norm = 1.0 / (6.0 * safe_range);
  at::Tensor hue = at::where(value == g, norm * (b - r) + 2.0 / 6.0, norm * (r - g) + 4.0 / 6.0);
  hue = at::where(value == r, norm * (g - b), hue);
  hue = keep_where(range > 0, hue, 0.0) + (hue < 0.0).to(hue.scalar_type());
  return at::stack({hue, saturation, value}, 1);
}

at::Tensor hsv_to_rgb(const at::Tensor& images) {
  const at::Tensor h = images.select(1, 0), s = images.select(1, 1), v = images.select(1, 2);
  const at::Tensor dh = at::remainder(h, 1.0) * 6.0;
  const at::Tensor dr = ((dh - 3.0).abs() - 1.0).clamp(0.0, 1.0);
  const at::Tensor dg = (2.0 - (dh - 2.0).abs()).clamp(0.0, 1.0);
  const at::Tensor db = (2.0 - (dh - 4.0).abs()).clamp(0.0, 1.0);
  const at::Tensor one_minus_s = 1.0 - s;
  return at::stack({v * (one_minus_s + s * dr), v * (one_minus_s + s * dg), v * (one_minus_s + s * db)}, 1);
}

at::Tensor transform_value_range(const at::Tensor& x, std::pair<double, double> from, std::pair<double, double> to) {
  if (from == to) return x;
  return (x - from.first) / (from.second - from.first) * (to.second - to.first) + to.first;
}

void AffineAugmentation::check_sampling() const {
  if (!is_affine_fill_mode(fill_mode())) {
    throw ConfigError(describe() + ": fill_mode must be 'reflect', 'wrap', 'constant' or 'nearest', got '" +
                      fill_mode() + "'");
  }
  if (!is_affine_interpolation(interpolation())) {
    throw ConfigError(describe() + ": interpolation must be 'nearest' or 'bilinear', got '" + interpolation() + "'");
  }
}

Shape ImageAugmentation::build_impl(const Shape& in) {
  if (in.size() != 3) throw ConfigError(describe() + " expects a 3-D input (H, W, C), got " + format_shape(in));
  return in;
}

at::Tensor ImageAugmentation::forward(const at::Tensor& x) { return is_training() ? augment(x) : x; }

at::Tensor AffineAugmentation::transform_images(const at::Tensor& x, const at::Tensor& transforms) const {
  return affine_transform(x, transforms, interpolation(), fill_mode(), fill_value());
}

std::string ImageAugmentation::export_onnx(io::OnnxGraph&, const std::vector<std::string>& in) const { return in[0]; }

}  // namespace torchfit
