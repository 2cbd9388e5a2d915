#include <torchfit/layers/affine_transform.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace torchfit {
namespace {

enum class Fill { reflect, wrap, constant, nearest };

Fill fill_of(const std::string& mode) {
  if (mode == "reflect") return Fill::reflect;
  if (mode == "wrap") return Fill::wrap;
  if (mode == "constant") return Fill::constant;
  if (mode == "nearest") return Fill::nearest;
  throw std::invalid_argument("affine_transform: fill_mode must be 'reflect', 'wrap', 'constant' or 'nearest', got '" +
                              mode + "'");
}

// The in-image index that the fill mode gives integer index `i` of an axis of `size` (Keras's index fixers;
// constant mode clamps, its outside taps are replaced by the fill value afterwards).
at::Tensor fixed_index(const at::Tensor& i, int64_t size, Fill fill) {
  switch (fill) {
    case Fill::wrap:
      return at::remainder(i, size);
    case Fill::reflect: {
      const at::Tensor m = at::remainder(i, 2 * size);  // period 2·size: a b c d d c b a
      return at::where(m >= size, 2 * size - 1 - m, m);
    }
    default:
      return i.clamp(0, size - 1);
  }
}

// One axis's taps: (integer index, weight) pairs of a sample point p.
std::vector<std::pair<at::Tensor, at::Tensor>> taps(const at::Tensor& p, bool bilinear) {
  if (!bilinear) return {{at::floor(p + 0.5).to(at::kLong), at::ones_like(p)}};
  const at::Tensor lower = at::floor(p);
  const at::Tensor upper_weight = p - lower;
  const at::Tensor index = lower.to(at::kLong);
  return {{index, 1.0 - upper_weight}, {index + 1, upper_weight}};
}

}  // namespace

bool is_affine_fill_mode(const std::string& m) {
  return m == "reflect" || m == "wrap" || m == "constant" || m == "nearest";
}

bool is_affine_interpolation(const std::string& i) { return i == "nearest" || i == "bilinear"; }

at::Tensor affine_transform(const at::Tensor& images, const at::Tensor& transforms, const std::string& interpolation,
                            const std::string& fill_mode, double fill_value) {
  const Fill fill = fill_of(fill_mode);
  if (!is_affine_interpolation(interpolation))
    throw std::invalid_argument("affine_transform: interpolation must be 'nearest' or 'bilinear', got '" +
                                interpolation + "'");
  if (images.dim() != 4) throw std::invalid_argument("affine_transform: images must be 4-D (N, C, H, W)");
  const int64_t n = images.size(0), c = images.size(1), h = images.size(2), w = images.size(3);
  const bool one = transforms.dim() == 1 && transforms.size(0) == 8;
  if (!one && !(transforms.dim() == 2 && transforms.size(0) == n && transforms.size(1) == 8))
    throw std::invalid_argument("affine_transform: transforms must be (8) or (N, 8) for " + std::to_string(n) +
                                " images");
  const at::ScalarType compute = images.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const auto opts = images.options().dtype(compute);
  const at::Tensor t = (one ? transforms.unsqueeze(0).expand({n, 8}) : transforms).to(opts);
  const at::Tensor xs = at::arange(w, opts).view({1, 1, w}), ys = at::arange(h, opts).view({1, h, 1});
  auto col = [&](int64_t k) { return t.select(1, k).view({n, 1, 1}); };
  const at::Tensor k = col(6) * xs + col(7) * ys + 1.0;
  const at::Tensor singular = k == 0;
  const at::Tensor safe_k = at::where(singular, at::ones_like(k), k);
  const at::Tensor src_x = at::where(singular, at::zeros_like(k), (col(0) * xs + col(1) * ys + col(2)) / safe_k);
  const at::Tensor src_y = at::where(singular, at::zeros_like(k), (col(3) * xs + col(4) * ys + col(5)) / safe_k);

  const at::Tensor flat = images.to(compute).reshape({n, c, h * w});
  const bool bilinear = interpolation == "bilinear";
  at::Tensor out = at::zeros({n, c, h * w}, opts);
  for (const auto& [iy, wy] : taps(src_y, bilinear)) {
    for (const auto& [ix, wx] : taps(src_x, bilinear)) {
      const at::Tensor index = (fixed_index(iy, h, fill) * w + fixed_index(ix, w, fill)).view({n, 1, h * w});
      at::Tensor value = flat.gather(2, index.expand({n, c, h * w}));
      if (fill == Fill::constant) {
        const at::Tensor inside = ((iy >= 0) & (iy < h) & (ix >= 0) & (ix < w)).view({n, 1, h * w});
        value = at::where(inside, value, at::full({}, fill_value, opts));
      }
      out = out + (wy * wx).view({n, 1, h * w}) * value;
    }
  }
  out = at::where(singular.view({n, 1, h * w}), at::full({}, fill_value, opts), out);
  return out.view({n, c, h, w}).to(images.scalar_type());
}

}  // namespace torchfit
