#include <torchfit/layers/shape.h>

#include <sstream>

namespace torchfit {

std::string format_shape(const Shape& shape) {
  std::ostringstream os;
  os << "(None";
  for (auto d : shape) os << ", " << d;
  os << ")";
  return os.str();
}

std::string format_shapes(const std::vector<Shape>& shapes) {
  std::string s;
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + format_shape(shapes[i]);
  return s;
}

std::string format_sizes(const std::vector<int64_t>& sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + ")";
}

Shape to_tensor_shape(const Shape& s) {
  if (s.size() == 3) return {s[2], s[0], s[1]};
  return s;
}

Shape to_keras_shape(const Shape& s) {
  if (s.size() == 3) return {s[1], s[2], s[0]};
  return s;
}

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace torchfit

namespace torchfit {

int64_t keras_to_tensor_axis(const Shape& keras_shape, int64_t axis) {
  const auto rank = static_cast<int64_t>(keras_shape.size()) + 1;
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a <= 0 || a >= rank) return -1;
  if (rank == 4) return a == 3 ? 1 : a + 1;  // (N, H, W, C) → (N, C, H, W)
  return a;
}

}  // namespace torchfit
