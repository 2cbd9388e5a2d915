#pragma once
/// @file numpy_random.h
/// NumPy's legacy `np.random.RandomState` (MT19937) as far as Keras's file shuffling needs it: integer
/// seeding, the bounded integer draw and `shuffle`. With the same seed the same list is permuted the
/// same way as NumPy does it, so torchfit's image_dataset_from_directory lists files in Keras's order.
#include <cstdint>
#include <random>
#include <vector>

namespace torchfit::data {

/// NumPy's legacy RandomState for an integer seed (numpy/random/mtrand.pyx, _mt19937.pyx, legacy
/// distributions): `RandomState(seed)` seeds MT19937 with init_genrand(seed) — the same state as
/// std::mt19937(seed) — and draws 32-bit words from it.
class NumpyRandomState {
 public:
  /// RandomState(seed); seed in [0, 2^32 − 1]. Errors: ConfigError naming the seed outside that range
  /// (NumPy: "Seed must be between 0 and 2**32 - 1").
  explicit NumpyRandomState(int64_t seed);
  /// The next 32-bit word (NumPy's next_uint32).
  uint32_t next_uint32() { return static_cast<uint32_t>(mt_()); }
  /// The next 64-bit word: two 32-bit words, the first one high (NumPy's legacy next_uint64).
  uint64_t next_uint64();
  /// A uniform integer in [0, max] by masked rejection (NumPy's random_interval): draw words, keep the
  /// bits under the smallest all-ones mask ≥ max, retry while the value exceeds max. 32-bit words when
  /// max fits in 32 bits, 64-bit ones otherwise; max = 0 draws nothing.
  uint64_t random_interval(uint64_t max);
  /// `RandomState.shuffle(x)` of a 1-D sequence: for i = n−1 down to 1, j = random_interval(i), swap
  /// x[i] and x[j] (Fisher–Yates; the same draws for a list and a 1-D array).
  template <typename T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) {
      const auto j = static_cast<size_t>(random_interval(static_cast<uint64_t>(i)));
      std::swap(x[i], x[j]);
    }
  }

 private:
  std::mt19937 mt_;
};

/// The order `np.random.RandomState(seed).shuffle` leaves 0 … n−1 in: element k of a list shuffled with
/// that seed is element order[k] of the original. Errors: as NumpyRandomState.
std::vector<int64_t> numpy_shuffle_order(int64_t n, int64_t seed);

}  // namespace torchfit::data
