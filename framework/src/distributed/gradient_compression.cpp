#include "gradient_compression.h"

#include <algorithm>
#include <cstring>

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TORCHFIT_F16C 1
#endif

namespace torchfit::distributed::compression {
namespace {

constexpr int64_t kGrain = 1 << 16;  // elements per task of at::parallel_for
constexpr int64_t kBlock = 2048;     // elements summed at a time by reduce (an L1-sized float buffer)

// bfloat16: c10::BFloat16's round to nearest even, NaN → quiet NaN. Branch-free, so the loops vectorise.
inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint32_t rounded = (u + 0x7fffU + ((u >> 16) & 1U)) >> 16;
  return static_cast<uint16_t>((u & 0x7fffffffU) > 0x7f800000U ? 0x7fc0U : rounded);
}

inline float bf16_value(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

void bf16_from_floats(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(in[i]);
}
void bf16_to_floats(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_value(in[i]);
}
void bf16_add_to_floats(const uint16_t* in, float* acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += bf16_value(in[i]);
}

// float16: IEEE round to nearest even (c10::Half's values), with the CPU's F16C conversions where it has them.
void fp16_from_floats_scalar(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = c10::detail::fp16_ieee_from_fp32_value(in[i]);
}
void fp16_to_floats_scalar(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = c10::detail::fp16_ieee_to_fp32_value(in[i]);
}

#ifdef TORCHFIT_F16C
bool cpu_has_f16c() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
  }();
  return has;
}
__attribute__((target("avx,f16c"))) void fp16_from_floats_f16c(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  fp16_from_floats_scalar(in + i, out + i, n - i);
}
__attribute__((target("avx,f16c"))) void fp16_to_floats_f16c(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  fp16_to_floats_scalar(in + i, out + i, n - i);
}
#endif

void fp16_from_floats(const float* in, uint16_t* out, int64_t n) {
#ifdef TORCHFIT_F16C
  if (cpu_has_f16c()) return fp16_from_floats_f16c(in, out, n);
#endif
  fp16_from_floats_scalar(in, out, n);
}
void fp16_to_floats(const uint16_t* in, float* out, int64_t n) {
#ifdef TORCHFIT_F16C
  if (cpu_has_f16c()) return fp16_to_floats_f16c(in, out, n);
#endif
  fp16_to_floats_scalar(in, out, n);
}
void fp16_add_to_floats(const uint16_t* in, float* acc, int64_t n) {
  float values[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    fp16_to_floats(in + b, values, m);
    for (int64_t i = 0; i < m; ++i) acc[b + i] += values[i];
  }
}

struct Format {
  void (*from_floats)(const float*, uint16_t*, int64_t);
  void (*to_floats)(const uint16_t*, float*, int64_t);
  void (*add_to_floats)(const uint16_t*, float*, int64_t);
};

Format format_of(GradientCompression format) {
  if (format == GradientCompression::bf16) return {bf16_from_floats, bf16_to_floats, bf16_add_to_floats};
  return {fp16_from_floats, fp16_to_floats, fp16_add_to_floats};
}

}  // namespace

void compress(GradientCompression format, const float* in, uint16_t* out, int64_t n) {
  const Format f = format_of(format);
  at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) { f.from_floats(in + b, out + b, e - b); });
}

void decompress(GradientCompression format, const uint16_t* in, float* out, int64_t n) {
  const Format f = format_of(format);
  at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) { f.to_floats(in + b, out + b, e - b); });
}

void reduce(GradientCompression format, const uint16_t* in, int64_t stride, int ranks, uint16_t* out, int64_t n) {
  const Format f = format_of(format);
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) {
    float sum[kBlock];
    for (int64_t b = begin; b < end; b += kBlock) {
      const int64_t m = std::min(kBlock, end - b);
      f.to_floats(in + b, sum, m);
      for (int r = 1; r < ranks; ++r) f.add_to_floats(in + r * stride + b, sum, m);
      f.from_floats(sum, out + b, m);
    }
  });
}

}  // namespace torchfit::distributed::compression
