#pragma once
/// @file fused_adam.h
/// FusedAdam — Adam in one multithreaded pass per parameter, with Keras's or PyTorch's ε.
#include <torch/optim/adam.h>

namespace torchfit {

/// Where Adam adds ε (the only difference between Keras 3's and PyTorch's Adam).
enum class AdamEpsilon {
  /// Keras 3 (keras/src/optimizers/adam.py): α = lr·√(1−β2ᵗ)/(1−β1ᵗ); p ← p − α·m / (√v + ε).
  keras,
  /// torch::optim::Adam: p ← p − lr/(1−β1ᵗ) · m / (√v / √(1−β2ᵗ) + ε) — in Keras's form an ε of ε·√(1−β2ᵗ).
  pytorch,
};

/// Adam over torch::optim::Adam's state: m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²; then the step of
/// `epsilon` (AdamEpsilon::keras by default, what compile()'s "adam" uses; the two agree where √v ≫ ε).
/// Keras's step is PyTorch's formula with ε/√(1−β2ᵗ) in place of ε, which is how it is computed: the
/// same kernel serves both. The update is done element by element in ONE pass over p, g, m, v
/// (at::parallel_for over the elements), instead of the six full-tensor passes and three temporaries of
/// torch::optim::Adam — for the article's 42.5 M-parameter Dense layer that is the largest single cost
/// of a CPU step. Same state objects (AdamParamState, `step` the t above) and serialization as
/// torch::optim::Adam, so checkpoints are interchangeable. A gradient in another memory layout than its
/// parameter (a convolution kernel's gradient is channels_last when the model runs channels_last) is made
/// contiguous first. torch::optim::Adam's own step does the work (with the ε of `epsilon`) for
/// parameters that are not contiguous float32 CPU tensors (e.g. on CUDA), for amsgrad or weight_decay ≠ 0,
/// and for every parameter when `fuse` is false (the reference kernels, for benchmarks and tests).
/// With AdamEpsilon::pytorch agrees with torch::optim::Adam to ≈1e-6 relative (float rounding order).
class FusedAdam : public torch::optim::Adam {
 public:
  FusedAdam(std::vector<torch::optim::OptimizerParamGroup> param_groups, torch::optim::AdamOptions defaults = {},
            AdamEpsilon epsilon = AdamEpsilon::keras, bool fuse = true)
      : torch::optim::Adam(std::move(param_groups), std::move(defaults)), epsilon_(epsilon), fuse_(fuse) {}
  explicit FusedAdam(std::vector<at::Tensor> params, torch::optim::AdamOptions defaults = {},
                     AdamEpsilon epsilon = AdamEpsilon::keras, bool fuse = true)
      : FusedAdam({torch::optim::OptimizerParamGroup(std::move(params))}, std::move(defaults), epsilon, fuse) {}

  torch::Tensor step(LossClosure closure = nullptr) override;

  AdamEpsilon epsilon() const { return epsilon_; }

 private:
  AdamEpsilon epsilon_;
  bool fuse_;
};

}  // namespace torchfit
