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
