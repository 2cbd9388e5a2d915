#include "layers/max_pool_train.h"

#include <cstring>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "layers/simd.h"

namespace torchfit::detail {
namespace {

/// Sizes of a non-overlapping pooling: x (n, h, w, c) and y (n, ho, wo, c) row-major NHWC.
struct PoolGeometry {
  int64_t n, h, w, c, ho, wo, ph, pw;
};

/// One window's lanes c..c+L: the maximum (ATen's rule) and the window position that holds it.
template <int L>
[[gnu::always_inline]] inline void window_max(const PoolGeometry& g, const float* x0, int64_t c,
                                              typename Lanes<L>::type& best, typename Lanes<L>::index& at) {
  using V = typename Lanes<L>::type;
  using I = typename Lanes<L>::index;
  std::memcpy(&best, x0 + c, sizeof(V));
  at = I{};
  int k = 0;
  for (int64_t i = 0; i < g.ph; ++i) {
    for (int64_t j = 0; j < g.pw; ++j, ++k) {
      if (k == 0) continue;
      V v;
      std::memcpy(&v, x0 + (i * g.w + j) * g.c + c, sizeof(V));
      const I take = (v > best) | (v != v);  // ATen: val > max || isnan(val)
      best = take ? v : best;
      at = take ? (I{} + k) : at;
    }
  }
}

/// Output row (n, oh) of the forward pass; with `relu`, max(·, 0) as ATen's relu_ (NaN stays NaN).
template <int L>
[[gnu::always_inline]] inline void forward_row(const PoolGeometry& g, const float* x, float* y, int64_t row,
                                               bool relu) {
  using V = typename Lanes<L>::type;
  using I = typename Lanes<L>::index;
  const int64_t n = row / g.ho, oh = row % g.ho;
  for (int64_t ow = 0; ow < g.wo; ++ow) {
    const float* x0 = x + ((n * g.h + oh * g.ph) * g.w + ow * g.pw) * g.c;
    float* out = y + (row * g.wo + ow) * g.c;
    for (int64_t c = 0; c < g.c; c += L) {
      V best;
      I at;
      window_max<L>(g, x0, c, best, at);
      if (relu) best = best < V{} ? V{} : best;
      std::memcpy(out + c, &best, sizeof(V));
    }
  }
}

/// The input rows oh·ph .. oh·ph + ph − 1 of image n's gradient (and, for the last output row, the rows
/// below it that no window covers). With `relu`, the gradient passes unless the maximum is <= 0 (ATen's
/// threshold_backward of relu).
template <int L>
[[gnu::always_inline]] inline void backward_row(const PoolGeometry& g, const float* x, const float* gy, float* gx,
                                                int64_t row, bool relu) {
  using V = typename Lanes<L>::type;
  using I = typename Lanes<L>::index;
  const int64_t n = row / g.ho, oh = row % g.ho;
  const int64_t h0 = oh * g.ph;
  const int64_t h1 = oh + 1 == g.ho ? g.h : h0 + g.ph;  // the last row also zeroes the uncovered rows
  for (int64_t ih = h0; ih < h1; ++ih) {                // columns no window covers
    float* tail = gx + ((n * g.h + ih) * g.w + g.wo * g.pw) * g.c;
    std::memset(tail, 0, sizeof(float) * (g.w - g.wo * g.pw) * g.c);
    if (ih >= h0 + g.ph) std::memset(gx + (n * g.h + ih) * g.w * g.c, 0, sizeof(float) * g.wo * g.pw * g.c);
  }
  for (int64_t ow = 0; ow < g.wo; ++ow) {
    const int64_t offset = ((n * g.h + h0) * g.w + ow * g.pw) * g.c;
    const float* g0 = gy + (row * g.wo + ow) * g.c;
    for (int64_t c = 0; c < g.c; c += L) {
      V best, grad;
      I at;
      window_max<L>(g, x + offset, c, best, at);
      std::memcpy(&grad, g0 + c, sizeof(V));
      if (relu) grad = best <= V{} ? V{} : grad;  // threshold_backward: NaN passes
      int k = 0;
      for (int64_t i = 0; i < g.ph; ++i) {
        for (int64_t j = 0; j < g.pw; ++j, ++k) {
          const V out = at == (I{} + k) ? grad + V{} : V{};  // + 0: a −0 gradient is +0, as ATen's fill + add
          std::memcpy(gx + offset + (i * g.w + j) * g.c + c, &out, sizeof(V));
        }
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// 8 lanes on AVX-512 CPUs too: pooling is bound by memory, and GCC lowers the selects of 16-lane vectors
// to scalar code.
__attribute__((target("avx2,fma"))) void forward_rows(const PoolGeometry& g, const float* x, float* y, int64_t r0,
                                                      int64_t r1, bool relu) {
  for (int64_t r = r0; r < r1; ++r) forward_row<8>(g, x, y, r, relu);
}
__attribute__((target("avx2,fma"))) void backward_rows(const PoolGeometry& g, const float* x, const float* gy,
                                                       float* gx, int64_t r0, int64_t r1, bool relu) {
  for (int64_t r = r0; r < r1; ++r) backward_row<8>(g, x, gy, gx, r, relu);
}
#endif

PoolGeometry geometry(const at::Tensor& x, at::IntArrayRef window) {
  return {x.size(0), x.size(2), x.size(3), x.size(1), x.size(2) / window[0], x.size(3) / window[1],
          window[0], window[1]};
}

at::Tensor pool_forward(const at::Tensor& x_in, at::IntArrayRef window, bool relu) {
  const at::Tensor x = x_in.contiguous(at::MemoryFormat::ChannelsLast);
  const PoolGeometry g = geometry(x, window);
  at::Tensor y = at::empty({g.n, g.c, g.ho, g.wo}, x.options().memory_format(at::MemoryFormat::ChannelsLast));
  const float* xd = x.data_ptr<float>();
  float* yd = y.data_ptr<float>();
  at::parallel_for(0, g.n * g.ho, 1, [&](int64_t r0, int64_t r1) {
#if defined(__x86_64__) && defined(__GNUC__)
    forward_rows(g, xd, yd, r0, r1, relu);
#endif
  });
  return y;
}

class MaxPool2dTrainFunction : public torch::autograd::Function<MaxPool2dTrainFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, std::vector<int64_t> window,
                            bool relu) {
    ctx->save_for_backward({x});
    ctx->saved_data["window"] = window;
    ctx->saved_data["relu"] = relu;
    return pool_forward(x, window, relu);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto window = ctx->saved_data["window"].toIntVector();
    const bool relu = ctx->saved_data["relu"].toBool();
    if (at::GradMode::is_enabled()) {  // create_graph: ATen's differentiable operators
      const auto pooled = at::max_pool2d_with_indices(saved[0], window, window);
      at::Tensor gy = grads[0];
      if (relu) gy = at::threshold_backward(gy, std::get<0>(pooled), 0);
      return {at::max_pool2d_with_indices_backward(gy, saved[0], window, window, {0, 0}, {1, 1}, false,
                                                   std::get<1>(pooled)),
              at::Tensor(), at::Tensor()};
    }
    return {max_pool2d_input_grad(grads[0], saved[0], window, relu), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool max_pool2d_train_applies(const at::Tensor& x, at::IntArrayRef window, at::IntArrayRef strides) {
  return at::GradMode::is_enabled() && x.requires_grad() && x.is_cpu() && x.dim() == 4 &&
         x.scalar_type() == at::kFloat && x.size(1) % 8 == 0 && window.size() == 2 && window.equals(strides) &&
         window[0] >= 1 && window[1] >= 1 && x.size(2) >= window[0] && x.size(3) >= window[1] &&
         x.is_contiguous(at::MemoryFormat::ChannelsLast) && simd_level() >= 1;
}

at::Tensor max_pool2d_train(const at::Tensor& x, at::IntArrayRef window, at::IntArrayRef strides, bool relu) {
  if (!max_pool2d_train_applies(x, window, strides)) {
    at::Tensor y = at::max_pool2d(x, window, strides);
    return relu ? y.relu_() : y;
  }
  return MaxPool2dTrainFunction::apply(x, window.vec(), relu);
}

at::Tensor max_pool2d_input_grad(const at::Tensor& gy_in, const at::Tensor& x_in, at::IntArrayRef window, bool relu) {
  const at::Tensor x = x_in.contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor gy = gy_in.contiguous(at::MemoryFormat::ChannelsLast);
  const PoolGeometry g = geometry(x, window);
  TORCH_CHECK(gy.size(0) == g.n && gy.size(1) == g.c && gy.size(2) == g.ho && gy.size(3) == g.wo,
              "max_pool2d_input_grad: gradient ", gy.sizes(), " does not fit input ", x.sizes());
  TORCH_CHECK(simd_level() >= 1, "max_pool2d_input_grad: ", kNoVectorPath);
  TORCH_CHECK(g.c % 8 == 0 && x.scalar_type() == at::kFloat,
              "max_pool2d_input_grad: needs float32 and channels a multiple of 8, got ", g.c);
  at::Tensor gx = at::empty_like(x, at::MemoryFormat::ChannelsLast);
  const float* xd = x.data_ptr<float>();
  const float* gd = gy.data_ptr<float>();
  float* gxd = gx.data_ptr<float>();
  at::parallel_for(0, g.n * g.ho, 1, [&](int64_t r0, int64_t r1) {
#if defined(__x86_64__) && defined(__GNUC__)
    backward_rows(g, xd, gd, gxd, r0, r1, relu);
#endif
  });
  return gx;
}

}  // namespace torchfit::detail
