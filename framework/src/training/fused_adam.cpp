#include <torchfit/training/fused_adam.h>

#include <ATen/Parallel.h>

#include "compat/libtorch_version.h"

#include <cmath>

namespace torchfit {
namespace {

bool fusable(const at::Tensor& p) {
  // A gradient in another layout (a convolution kernel's gradient is channels_last when its input was)
  // is made contiguous first, so p, g, m and v share one element order.
  return p.device().is_cpu() && p.scalar_type() == at::kFloat && p.is_contiguous() && p.grad().defined() &&
         p.grad().device().is_cpu() && p.grad().scalar_type() == at::kFloat && !p.grad().is_sparse() &&
         p.grad().sizes() == p.sizes();
}

// One pass: the float arithmetic of mul_/add_/addcmul_/sqrt/div/add_/addcdiv_ in the same order.
// Compiled for AVX-512, AVX2 and baseline x86-64, the best one picked at load time for the CPU it runs on
// (the loop is compute-bound on sqrt and division at baseline's 4 lanes). No FMA contraction, so every
// version computes the same floats.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off")))
#endif
void adam_kernel(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                 int64_t begin, int64_t end, float b1, float one_minus_b1, float b2, float one_minus_b2,
                 float inv_sqrt_bc2, float eps, float neg_step) {
  for (int64_t i = begin; i < end; ++i) {
    const float gi = g[i];
    const float mi = m[i] * b1 + one_minus_b1 * gi;
    const float vi = v[i] * b2 + one_minus_b2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) * inv_sqrt_bc2 + eps;  // ATen divides by a scalar as × (1 / s)
    p[i] = p[i] + neg_step * (mi / denom);
  }
}

// The ε the PyTorch formula needs at step t (1-based) for `placement`: Keras's ε/√(1−β2ᵗ), or ε.
double step_epsilon(AdamEpsilon placement, const torch::optim::AdamOptions& options, int64_t t) {
  if (placement == AdamEpsilon::pytorch) return options.eps();
  return options.eps() / std::sqrt(1 - std::pow(std::get<1>(options.betas()), static_cast<double>(t)));
}

// One pass of adam_kernel over p with its state (created at the first step), at step state.step() + 1.
void fused_step(const at::Tensor& p, const torch::optim::AdamOptions& options, AdamEpsilon placement,
                torch::optim::AdamParamState& state) {
  state.step(state.step() + 1);
  const double beta1 = std::get<0>(options.betas());
  const double beta2 = std::get<1>(options.betas());
  const double bias_correction1 = 1 - std::pow(beta1, state.step());
  const double bias_correction2 = 1 - std::pow(beta2, state.step());
  const double step_size = options.lr() / bias_correction1;
  float* pd = p.data_ptr<float>();
  const at::Tensor grad = p.grad().is_contiguous() ? p.grad() : p.grad().contiguous();
  const float* gd = grad.data_ptr<float>();
  float* md = state.exp_avg().data_ptr<float>();
  float* vd = state.exp_avg_sq().data_ptr<float>();
  const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
  const float omb1 = static_cast<float>(1 - beta1), omb2 = static_cast<float>(1 - beta2);
  const float inv_sbc2 = 1.0f / static_cast<float>(std::sqrt(bias_correction2));
  const float eps = static_cast<float>(step_epsilon(placement, options, state.step()));
  const float neg_step = static_cast<float>(-step_size);
  at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    adam_kernel(pd, gd, md, vd, begin, end, b1, omb1, b2, omb2, inv_sbc2, eps, neg_step);
  });
}

}  // namespace

torch::Tensor FusedAdam::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss = {};
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    auto& options = static_cast<torch::optim::AdamOptions&>(group.params().empty() ? defaults() : group.options());
    const bool plain = fuse_ && !options.amsgrad() && options.weight_decay() == 0;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto key = compat::optimizer_state_key(p);
      auto it = state_.find(key);
      if (!plain || !fusable(p)) {
        // torch::optim::Adam's step for this parameter alone, sharing our state entry, with the ε of
        // the step it takes (the state's step + 1).
        const int64_t t = it == state_.end() ? 1 : static_cast<torch::optim::AdamParamState&>(*it->second).step() + 1;
        torch::optim::AdamOptions single_options = options;
        single_options.eps(step_epsilon(epsilon_, options, t));
        torch::optim::Adam single({p}, single_options);
        if (it != state_.end()) single.state()[key] = it->second->clone();
        single.step();
        state_[key] = single.state()[key]->clone();
        continue;
      }
      if (it == state_.end()) {
        auto s = std::make_unique<torch::optim::AdamParamState>();
        s->step(0);
        s->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        s->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        it = state_.emplace(key, std::move(s)).first;
      }
      fused_step(p, options, epsilon_, static_cast<torch::optim::AdamParamState&>(*it->second));
    }
  }
  return loss;
}

}  // namespace torchfit
