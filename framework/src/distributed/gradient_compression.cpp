#include "gradient_compression.h"

#include <cstring>

#include <ATen/Parallel.h>
#include <c10/util/Half.h>

namespace torchfit::distributed::compression {
namespace {

constexpr int64_t kGrain = 1 << 16;  // elements per task of at::parallel_for

inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffU) > 0x7f800000U) return 0x7fc0;  // NaN
  return static_cast<uint16_t>((u + 0x7fffU + ((u >> 16) & 1U)) >> 16);
}

inline float bf16_value(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint16_t fp16_bits(float f) { return c10::detail::fp16_ieee_from_fp32_value(f); }
inline float fp16_value(uint16_t h) { return c10::detail::fp16_ieee_to_fp32_value(h); }

template <uint16_t (*Bits)(float)>
void compress_as(const float* in, uint16_t* out, int64_t n) {
  at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = Bits(in[i]);
  });
}

template <float (*Value)(uint16_t)>
void decompress_as(const uint16_t* in, float* out, int64_t n) {
  at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = Value(in[i]);
  });
}

template <uint16_t (*Bits)(float), float (*Value)(uint16_t)>
void reduce_as(const uint16_t* in, int64_t stride, int ranks, uint16_t* out, int64_t n) {
  at::parallel_for(0, n, kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float sum = Value(in[i]);
      for (int r = 1; r < ranks; ++r) sum += Value(in[r * stride + i]);
      out[i] = Bits(sum);
    }
  });
}

}  // namespace

void compress(GradientCompression format, const float* in, uint16_t* out, int64_t n) {
  if (format == GradientCompression::bf16) {
    compress_as<bf16_bits>(in, out, n);
  } else {
    compress_as<fp16_bits>(in, out, n);
  }
}

void decompress(GradientCompression format, const uint16_t* in, float* out, int64_t n) {
  if (format == GradientCompression::bf16) {
    decompress_as<bf16_value>(in, out, n);
  } else {
    decompress_as<fp16_value>(in, out, n);
  }
}

void reduce(GradientCompression format, const uint16_t* in, int64_t stride, int ranks, uint16_t* out, int64_t n) {
  if (format == GradientCompression::bf16) {
    reduce_as<bf16_bits, bf16_value>(in, stride, ranks, out, n);
  } else {
    reduce_as<fp16_bits, fp16_value>(in, stride, ranks, out, n);
  }
}

}  // namespace torchfit::distributed::compression
