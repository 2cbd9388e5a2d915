#include "layers/dense_weight_grad.h"

#include <algorithm>

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include "compat/autocast.h"
#include "layers/simd.h"

namespace torchfit::detail {
namespace {

constexpr int64_t kColumns = 256;  // inputs per task: x's (N, 256) block stays in L1/L2 for all units

/// dw[u][j] = Σ_n gy[n][u] · x[n][j] for every unit u and the inputs j in [j0, j1).
template <int L, int RMAX>
[[gnu::always_inline]] inline void columns_weight_grad(const float* gy, const float* x, float* dw, int64_t n,
                                                       int64_t units, int64_t inputs, int64_t j0, int64_t j1) {
  constexpr int CB = 2;
  const int64_t vec_end = j0 + (j1 - j0) / (CB * L) * (CB * L);
  for (int64_t u = 0; u < units; u += RMAX) {
    const int r = static_cast<int>(std::min<int64_t>(RMAX, units - u));
    for (int64_t j = j0; j < vec_end; j += CB * L) {
      rank_update_r<L, RMAX, CB, true>(r, gy + u, units, x + j, inputs, n, dw + u * inputs + j, inputs);
    }
    for (int64_t uu = u; uu < u + r; ++uu) {  // the inputs left over at the end of the block
      for (int64_t j = vec_end; j < j1; ++j) {
        float s = 0;
        for (int64_t i = 0; i < n; ++i) s += gy[i * units + uu] * x[i * inputs + j];
        dw[uu * inputs + j] = s;
      }
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) void weight_grad_avx2(const float* gy, const float* x, float* dw, int64_t n,
                                                          int64_t units, int64_t inputs, int64_t j0, int64_t j1) {
  columns_weight_grad<8, 6>(gy, x, dw, n, units, inputs, j0, j1);
}
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) void weight_grad_avx512(const float* gy, const float* x,
                                                                                      float* dw, int64_t n,
                                                                                      int64_t units, int64_t inputs,
                                                                                      int64_t j0, int64_t j1) {
  columns_weight_grad<16, 12>(gy, x, dw, n, units, inputs, j0, j1);
}
#endif

class LinearTrainFunction : public torch::autograd::Function<LinearTrainFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w,
                            const at::Tensor& b) {
    ctx->save_for_backward({x, w});
    const bool bias = b.numel() > 0;  // no bias: an empty tensor (LibTorch 1.13 refuses undefined inputs)
    ctx->saved_data["bias"] = bias;
    return at::linear(x, w, bias ? b : at::Tensor());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& w = saved[1];
    const at::Tensor gy = grads[0].contiguous();
    const bool bias = ctx->saved_data["bias"].toBool();
    at::Tensor gx, gw, gb;
    if (ctx->needs_input_grad(0)) gx = gy.mm(w);
    if (bias && ctx->needs_input_grad(2)) gb = gy.sum(0);
    if (ctx->needs_input_grad(1)) {
      // create_graph: a product that is itself differentiable
      gw = at::GradMode::is_enabled() ? gy.t().mm(x) : dense_weight_grad(gy, x);
    }
    return {gx, gw, gb};
  }
};

}  // namespace

bool linear_train_applies(const at::Tensor& x, const at::Tensor& w) {
  return at::GradMode::is_enabled() && w.requires_grad() && x.is_cpu() && x.dim() == 2 && w.dim() == 2 &&
         x.scalar_type() == at::kFloat && w.scalar_type() == at::kFloat && w.is_contiguous() &&
         !compat::autocast_enabled(c10::DeviceType::CPU) && simd_level() >= 1;
}

at::Tensor linear_train(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) {
  if (!linear_train_applies(x, w)) return at::linear(x, w, b);
  return LinearTrainFunction::apply(x, w, b.defined() ? b : at::empty({0}, w.options()));
}

at::Tensor dense_weight_grad(const at::Tensor& gy_in, const at::Tensor& x_in, int level) {
  const at::Tensor gy = gy_in.contiguous();
  const at::Tensor x = x_in.contiguous();
  if (level <= 0) level = simd_level();
  TORCH_CHECK(gy.dim() == 2 && x.dim() == 2 && gy.size(0) == x.size(0), "dense_weight_grad: gy ", gy.sizes(), " and x ",
              x.sizes(), " must be (N, units) and (N, inputs)");
  TORCH_CHECK(simd_level() >= 1, "dense_weight_grad: ", kNoVectorPath);
  TORCH_CHECK(gy.scalar_type() == at::kFloat && x.scalar_type() == at::kFloat && level >= 1 && level <= simd_level(),
              "dense_weight_grad: needs float32 and vector level ", level, " <= ", simd_level());
  const int64_t n = x.size(0), units = gy.size(1), inputs = x.size(1);
  at::Tensor dw = at::empty({units, inputs}, x.options());
  const float* gd = gy.data_ptr<float>();
  const float* xd = x.data_ptr<float>();
  float* wd = dw.data_ptr<float>();
  const int64_t blocks = (inputs + kColumns - 1) / kColumns;
  at::parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t j0 = blk * kColumns, j1 = std::min(inputs, j0 + kColumns);
#if defined(__x86_64__) && defined(__GNUC__)
      if (level == 2) {
        weight_grad_avx512(gd, xd, wd, n, units, inputs, j0, j1);
      } else {
        weight_grad_avx2(gd, xd, wd, n, units, inputs, j0, j1);
      }
#endif
    }
  });
  return dw;
}

}  // namespace torchfit::detail
