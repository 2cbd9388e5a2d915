#pragma once
/// @file random.h
/// Counter-based random numbers for the data pipeline: every sample's draws derive from
/// (seed, pass, position), so results do not depend on how many worker threads run or in which order.
#include <cstdint>
#include <string>
#include <vector>

#include <torchfit/error.h>

namespace torchfit::data {

/// SplitMix64 finaliser: a bijective 64-bit mix (Steele, Lea, Flood 2014).
inline uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Seed of one sample's random stream: mix of the iterator seed, the pass number (0, 1, …) and the
/// sample's position inside the pass (0 … samples−1). Distinct triples give unrelated streams.
inline uint64_t sample_seed(uint64_t seed, int64_t pass, int64_t position) {
  return mix64(mix64(mix64(seed) ^ static_cast<uint64_t>(pass)) ^ static_cast<uint64_t>(position));
}

/// A small, fast, platform-independent generator (xoshiro256**, Blackman & Vigna) seeded through
/// SplitMix64. Unlike std::uniform_real_distribution its doubles are the same on every compiler.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9E3779B97F4A7C15ull;
      s = mix64(seed);
    }
  }
  /// Next raw 64-bit value.
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform double in [lo, hi) (as numpy.random.uniform(lo, hi)).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [0, n) for n > 0 (Lemire's unbiased method is overkill here: modulo bias
  /// below 2^-40 for n < 2^24).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next_u64() % n; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// The index order of one pass over n samples: 0 … n−1 when !shuffle, otherwise a Fisher–Yates
/// permutation drawn from (seed, pass). Same arguments ⇒ same order on every platform.
/// Errors: IndexError when n < 0 or pass < 0.
inline std::vector<int64_t> pass_order(int64_t n, bool shuffle, uint64_t seed, int64_t pass) {
  if (n < 0 || pass < 0)
    throw IndexError("pass_order: n and pass must be >= 0, got n " + std::to_string(n) + ", pass " +
                     std::to_string(pass));
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  if (shuffle && n > 1) {
    Rng rng(mix64(mix64(seed ^ 0x5DEECE66Dull) ^ static_cast<uint64_t>(pass)));
    for (int64_t i = n - 1; i > 0; --i) {
      const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i) + 1));
      std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
    }
  }
  return order;
}

}  // namespace torchfit::data
