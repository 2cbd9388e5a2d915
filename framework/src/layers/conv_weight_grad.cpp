#include "layers/conv_weight_grad.h"

#include <algorithm>
#include <cstring>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "compat/autocast.h"
#include "layers/simd.h"

// The kernels are written once with GCC vector types and compiled twice, for AVX2+FMA and for
// AVX-512, by target-attributed entry points; multiply-adds contract to FMA instructions inside this
// file only (the project compiles as ISO C++, where GCC does not contract by default).
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")

namespace torchfit::detail {
namespace {

/// One convolution's sizes; x (n, h, w, ci) and gy (n, ho, wo, co) row-major NHWC.
struct Geometry {
  int64_t n, h, w, ci, ho, wo, co, kh, kw, sh, sw, pt, pl;
  int64_t taps() const { return kw * ci; }  // one kernel row: kw × ci floats, contiguous in x
};

/// Output pixel `ow` of a row whose kernel row leaves the image (padding): tap by tap.
inline void edge_pixel(const Geometry& g, const float* xr, const float* gp, float* out, int64_t ow) {
  for (int64_t kw = 0; kw < g.kw; ++kw) {
    const int64_t iw = ow * g.sw - g.pl + kw;
    if (iw < 0 || iw >= g.w) continue;
    for (int64_t ci = 0; ci < g.ci; ++ci) {
      const float b = xr[iw * g.ci + ci];
      float* o = out + (kw * g.ci + ci) * g.co;
      for (int64_t c = 0; c < g.co; ++c) o[c] += b * gp[c];
    }
  }
}

/// db[c] += Σ_ow gr[ow·co + c]: the bias gradient of one output row, read while it is in the cache.
template <int L>
[[gnu::always_inline]] inline void row_bias_grad(const float* gr, int64_t wo, int64_t co, float* db) {
  using V = typename Lanes<L>::type;
  for (int64_t c = 0; c < co; c += L) {
    V acc = V{};
    for (int64_t ow = 0; ow < wo; ++ow) {
      V v;
      std::memcpy(&v, gr + ow * co + c, sizeof(V));
      acc += v;
    }
    V o;
    std::memcpy(&o, db + c, sizeof(V));
    o += acc;
    std::memcpy(db + c, &o, sizeof(V));
  }
}

/// Adds image n's contribution to dw (kh, kw, ci, co), and to db (co) unless it is null.
template <int L, int RMAX, int CB>
[[gnu::always_inline]] inline void image_weight_grad(const Geometry& g, const float* x, const float* gy, float* dw,
                                                     float* db, int64_t n) {
  const int64_t taps = g.taps();
  // Output columns whose whole kernel row lies inside the image: [lo, hi).
  const int64_t lo = std::min(g.wo, (g.pl + g.sw - 1) / g.sw);
  const int64_t last = g.w - g.kw + g.pl;  // the largest ow·sw allowed
  const int64_t hi = last < 0 ? lo : std::clamp(last / g.sw + 1, lo, g.wo);
  for (int64_t oh = 0; oh < g.ho; ++oh) {
    const float* gr = gy + (n * g.ho + oh) * g.wo * g.co;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = oh * g.sh - g.pt + kh;
      if (ih < 0 || ih >= g.h) continue;
      const float* xr = x + (n * g.h + ih) * g.w * g.ci;
      float* out = dw + kh * taps * g.co;
      for (int64_t j = 0; j < taps && hi > lo; j += RMAX) {
        const int r = static_cast<int>(std::min<int64_t>(RMAX, taps - j));
        for (int64_t c = 0; c < g.co; c += CB * L) {
          rank_update_r<L, RMAX, CB, false>(r, xr + (lo * g.sw - g.pl) * g.ci + j, g.sw * g.ci, gr + lo * g.co + c,
                                            g.co, hi - lo, out + j * g.co + c, g.co);
        }
      }
      for (int64_t ow = 0; ow < lo; ++ow) edge_pixel(g, xr, gr + ow * g.co, out, ow);
      for (int64_t ow = hi; ow < g.wo; ++ow) edge_pixel(g, xr, gr + ow * g.co, out, ow);
    }
    if (db != nullptr) row_bias_grad<L>(gr, g.wo, g.co, db);
  }
}

template <int L, int RMAX>
[[gnu::always_inline]] inline void images_weight_grad(const Geometry& g, const float* x, const float* gy, float* dw,
                                                      float* db, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    if (g.co % (2 * L) == 0) {
      image_weight_grad<L, RMAX, 2>(g, x, gy, dw, db, n);
    } else {
      image_weight_grad<L, RMAX, 1>(g, x, gy, dw, db, n);
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// 8 lanes: 2 × 6 accumulators + 2 filter vectors + 1 broadcast of AVX2's 16 registers.
__attribute__((target("avx2,fma"))) void weight_grad_avx2(const Geometry& g, const float* x, const float* gy, float* dw,
                                                          float* db, int64_t n0, int64_t n1) {
  images_weight_grad<8, 6>(g, x, gy, dw, db, n0, n1);
}
// 16 lanes: 2 × 12 accumulators + 2 filter vectors + 1 broadcast of AVX-512's 32 registers.
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void weight_grad_avx512(const Geometry& g, const float* x,
                                                                                      const float* gy, float* dw,
                                                                                      float* db, int64_t n0,
                                                                                      int64_t n1) {
  images_weight_grad<16, 12>(g, x, gy, dw, db, n0, n1);
}
#endif

}  // namespace

std::vector<at::Tensor> conv2d_weight_grad(const at::Tensor& gy_in, const at::Tensor& x_in, const at::Tensor& w,
                                           at::IntArrayRef stride, at::IntArrayRef padding, bool bias, int level) {
  const at::Tensor x = x_in.contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor gy = gy_in.contiguous(at::MemoryFormat::ChannelsLast);
  const Geometry g{x.size(0), x.size(2), x.size(3), x.size(1), gy.size(2), gy.size(3), gy.size(1),
                   w.size(2), w.size(3), stride[0], stride[1], padding[0], padding[1]};
  if (level <= 0) level = simd_level();
  TORCH_CHECK(simd_level() >= 1, "conv2d_weight_grad: ", kNoVectorPath);
  TORCH_CHECK(level >= 1 && level <= simd_level() && g.co % 8 == 0 && x.scalar_type() == at::kFloat,
              "conv2d_weight_grad: needs float32 tensors, filters a multiple of 8 and vector level ", level,
              " <= ", simd_level());
  if (g.co % 16 != 0) level = 1;
  // One partial sum per chunk of images, each chunk one task: no two tasks share a partial, whichever
  // threads run them.
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), g.n));
  const int64_t kernel_size = g.kh * g.taps() * g.co;
  // Each chunk's row: its kernel gradient (kh, kw, ci, co), then its bias gradient (co).
  at::Tensor partial = at::zeros({chunks, kernel_size + (bias ? g.co : 0)}, x.options());
  const float* xd = x.data_ptr<float>();
  const float* gd = gy.data_ptr<float>();
  float* pd = partial.data_ptr<float>();
  const int64_t stride_p = partial.size(1);
  at::parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t n0 = g.n * c / chunks, n1 = g.n * (c + 1) / chunks;
      float* dw = pd + c * stride_p;
      float* db = bias ? dw + kernel_size : nullptr;
#if defined(__x86_64__) && defined(__GNUC__)
      if (level == 2) {
        weight_grad_avx512(g, xd, gd, dw, db, n0, n1);
      } else {
        weight_grad_avx2(g, xd, gd, dw, db, n0, n1);
      }
#endif
    }
  });
  const at::Tensor total = partial.sum(0);
  at::Tensor grad_w = at::empty_like(w);
  grad_w.permute({2, 3, 1, 0}).copy_(total.narrow(0, 0, kernel_size).view({g.kh, g.kw, g.ci, g.co}));
  at::Tensor grad_b = bias ? total.narrow(0, kernel_size, g.co).clone() : at::Tensor();
  return {grad_w, grad_b};
}

namespace {

/// at::conv2d whose backward takes the kernel and bias gradients from conv2d_weight_grad.
class Conv2dTrainFunction : public torch::autograd::Function<Conv2dTrainFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& b, std::vector<int64_t> stride, std::vector<int64_t> padding) {
    ctx->save_for_backward({x, w});
    ctx->saved_data["stride"] = stride;
    ctx->saved_data["padding"] = padding;
    const bool bias = b.numel() > 0;  // no bias: an empty tensor (LibTorch 1.13 refuses undefined inputs)
    ctx->saved_data["bias"] = bias;
    return at::conv2d(x, w, bias ? b : at::Tensor(), stride, padding);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& w = saved[1];
    const std::vector<int64_t> stride = ctx->saved_data["stride"].toIntVector();
    const std::vector<int64_t> padding = ctx->saved_data["padding"].toIntVector();
    const bool bias = ctx->saved_data["bias"].toBool();
    const at::Tensor gy = grads[0].contiguous(at::MemoryFormat::ChannelsLast);
    const bool need_x = ctx->needs_input_grad(0), need_w = ctx->needs_input_grad(1);
    const bool need_b = bias && ctx->needs_input_grad(2);
    if (at::GradMode::is_enabled()) {  // create_graph: gradients that are themselves differentiable
      const std::vector<int64_t> bias_sizes{w.size(0)};
      auto g = at::convolution_backward(gy, x, w, bias_sizes, stride, padding, {1, 1}, false, {0, 0}, 1,
                                        {need_x, need_w, need_b});
      return {std::get<0>(g), std::get<1>(g), std::get<2>(g), at::Tensor(), at::Tensor()};
    }
    at::Tensor gx;
    if (need_x) {
      gx = std::get<0>(at::convolution_backward(gy, x, w, c10::nullopt, stride, padding, {1, 1}, false, {0, 0}, 1,
                                                {true, false, false}));
    }
    if (!need_w && !need_b) return {gx, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    auto gw = conv2d_weight_grad(gy, x, w, stride, padding, need_b);
    return {gx, need_w ? gw[0] : at::Tensor(), gw[1], at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool conv2d_train_applies(const at::Tensor& x, const at::Tensor& w, at::IntArrayRef dilation, int64_t groups) {
  return at::GradMode::is_enabled() && w.requires_grad() && x.is_cpu() && x.dim() == 4 &&
         x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat && groups == 1 && dilation.size() == 2 &&
         dilation[0] == 1 && dilation[1] == 1 && w.size(0) % 8 == 0 &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) && !compat::autocast_enabled(c10::DeviceType::CPU) &&
         simd_level() >= 1;
}

at::Tensor conv2d_train(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, at::IntArrayRef stride,
                        at::IntArrayRef padding, at::IntArrayRef dilation, int64_t groups) {
  if (!conv2d_train_applies(x, w, dilation, groups)) return at::conv2d(x, w, b, stride, padding, dilation, groups);
  return Conv2dTrainFunction::apply(x, w, b.defined() ? b : at::empty({0}, w.options()), stride.vec(), padding.vec());
}

}  // namespace torchfit::detail

#pragma GCC pop_options
