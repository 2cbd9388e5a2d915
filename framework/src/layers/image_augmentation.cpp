#include <torchfit/layers/image_augmentation.h>

#include <algorithm>
#include <cmath>
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

std::pair<double, double> keras_base_factor_range(const KerasFactor& f, const std::string& who, double lo, double hi) {
  const auto& v = f.values;
  bool ok = v.size() == 1 || v.size() == 2;
  for (double e : v) ok = ok && std::isfinite(e);
  if (ok) ok = v.size() == 1 ? v[0] >= lo && v[0] <= hi : !(v[0] > hi || v[1] < lo);
  if (!ok) {
    throw ConfigError(who + ": factor must be a number in [" + augmentation_number(lo) + ", " +
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

std::pair<double, double> sorted_value_range(const std::vector<double>& v, const std::string& who) {
  if (v.size() != 2) {
    throw ConfigError(who + ": value_range must be two numbers [low, high], got " + std::to_string(v.size()));
  }
  return {std::min(v[0], v[1]), std::max(v[0], v[1])};
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
