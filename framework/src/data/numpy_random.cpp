// NumPy's legacy RandomState: MT19937 seeded by init_genrand, random_interval and shuffle.
#include <torchfit/data/numpy_random.h>
#include <torchfit/error.h>

#include <numeric>
#include <string>

namespace torchfit::data {

namespace {

uint32_t numpy_checked_seed(int64_t seed) {
  if (seed < 0 || seed > int64_t{0xFFFFFFFF})
    throw ConfigError("seed must be between 0 and 2**32 - 1 (NumPy's RandomState), got " + std::to_string(seed));
  return static_cast<uint32_t>(seed);
}

}  // namespace

NumpyRandomState::NumpyRandomState(int64_t seed) : mt_(numpy_checked_seed(seed)) {}

uint64_t NumpyRandomState::next_uint64() {
  const uint64_t hi = next_uint32();
  return hi << 32 | next_uint32();
}

uint64_t NumpyRandomState::random_interval(uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  uint64_t value;
  if (max <= 0xFFFFFFFFull) {
    while ((value = (next_uint32() & mask)) > max) {
    }
  } else {
    while ((value = (next_uint64() & mask)) > max) {
    }
  }
  return value;
}

std::vector<int64_t> numpy_shuffle_order(int64_t n, int64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n < 0 ? 0 : n));
  std::iota(order.begin(), order.end(), int64_t{0});
  NumpyRandomState rng(seed);
  rng.shuffle(order);
  return order;
}

}  // namespace torchfit::data
