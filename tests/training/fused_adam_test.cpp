// FusedAdam with PyTorch's ε agrees with torch::optim::Adam (the reference math) and checkpoints
// interchangeably; with Keras's ε (the default) it is Keras's Adam, checked against the Keras NumPy reference
// in keras_optimizers_test.cpp, and here against torch::optim::Adam given Keras's ε per step.
#include <gtest/gtest.h>

#include <cmath>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <torchfit/training/fused_adam.h>

#include "compat/libtorch_version.h"

using torchfit::AdamEpsilon;
using torchfit::FusedAdam;

namespace {
// |a − b| ≤ 1e-6·|b| + 1e-8 everywhere (float rounding order differs; updates are ~1e-3).
bool close(const at::Tensor& a, const at::Tensor& b) { return at::allclose(a, b, 1e-6, 1e-8); }
}  // namespace

TEST(FusedAdam, MatchesTorchAdamOverManySteps) {
  at::manual_seed(0);
  auto w1 = at::randn({1000, 37}).requires_grad_(true);  // > one parallel chunk
  auto w2 = w1.detach().clone().requires_grad_(true);
  auto opts = torch::optim::AdamOptions(1e-3).betas({0.9, 0.999}).eps(1e-7);
  torch::optim::Adam ref({w1}, opts);
  FusedAdam fused({w2}, opts, torchfit::AdamEpsilon::pytorch);
  for (int s = 0; s < 20; ++s) {
    auto g = at::randn({1000, 37});
    w1.mutable_grad() = g.clone();
    w2.mutable_grad() = g.clone();
    ref.step();
    fused.step();
  }
  EXPECT_TRUE(close(w2.detach(), w1.detach()));
  EXPECT_FALSE(at::equal(w1.detach(), w1.detach() * 0));  // weights moved
  // State serialises in torch::optim::Adam's format: an Adam loads FusedAdam's state.
  torch::serialize::OutputArchive out;
  fused.save(out);
  std::stringstream buf;
  out.save_to(buf);
  torch::serialize::InputArchive in;
  in.load_from(buf);
  auto w3 = w2.detach().clone().requires_grad_(true);
  torch::optim::Adam loaded({w3}, opts);
  loaded.load(in);
  auto g = at::randn({1000, 37});
  w3.mutable_grad() = g.clone();
  w2.mutable_grad() = g.clone();
  loaded.step();
  fused.step();
  EXPECT_TRUE(close(w2.detach(), w3.detach()));
}

// The one version-dependent key (string in LibTorch 1.x, TensorImpl* in 2.x): torchfit's key must be
// the one LibTorch's own Adam files a parameter's state under.
TEST(FusedAdam, StateKeyIsTheOneLibTorchAdamUses) {
  auto w = at::zeros({3}).requires_grad_(true);
  auto other = at::zeros({3}).requires_grad_(true);
  torch::optim::Adam ref({w}, torch::optim::AdamOptions(1e-3));
  w.mutable_grad() = at::ones({3});
  ref.step();
  ASSERT_EQ(ref.state().size(), 1u);
  EXPECT_EQ(ref.state().count(torchfit::compat::optimizer_state_key(w)), 1u);
  EXPECT_EQ(ref.state().count(torchfit::compat::optimizer_state_key(other)), 0u);
  const at::Tensor handle = w;  // another handle to the same TensorImpl: same key (detach() makes a new one)
  EXPECT_EQ(torchfit::compat::optimizer_state_key(handle), torchfit::compat::optimizer_state_key(w));
}

TEST(FusedAdam, FallsBackForWeightDecayAndNonContiguous) {
  at::manual_seed(1);
  auto base = at::randn({8, 6});
  auto w1 = base.clone().requires_grad_(true);
  auto w2 = base.t().contiguous().t().requires_grad_(true);  // non-contiguous view layout
  ASSERT_FALSE(w2.is_contiguous());
  auto opts = torch::optim::AdamOptions(1e-2).weight_decay(0.1);
  torch::optim::Adam ref({w1}, opts);
  FusedAdam fused({w2}, opts, torchfit::AdamEpsilon::pytorch);
  for (int s = 0; s < 5; ++s) {
    auto g = at::randn({8, 6});
    w1.mutable_grad() = g.clone();
    w2.mutable_grad() = g.clone();
    ref.step();
    fused.step();
  }
  EXPECT_TRUE(close(w2.detach(), w1.detach()));
}

// A convolution kernel's gradient is channels_last when the model runs channels_last: FusedAdam must
// pair each gradient element with its own parameter element.
TEST(FusedAdam, ChannelsLastGradientMatchesTorchAdam) {
  at::manual_seed(1);
  auto w1 = at::randn({8, 5, 3, 3}).requires_grad_(true);
  auto w2 = w1.detach().clone().requires_grad_(true);
  auto opts = torch::optim::AdamOptions(1e-2).eps(1e-7);
  torch::optim::Adam ref({w1}, opts);
  FusedAdam fused({w2}, opts, torchfit::AdamEpsilon::pytorch);
  for (int s = 0; s < 5; ++s) {
    auto g = at::randn({8, 5, 3, 3});
    w1.mutable_grad() = g.clone();
    w2.mutable_grad() = g.contiguous(at::MemoryFormat::ChannelsLast);
    ASSERT_FALSE(w2.grad().is_contiguous());
    ref.step();
    fused.step();
  }
  EXPECT_TRUE(close(w2.detach(), w1.detach()));
  EXPECT_TRUE(w2.is_contiguous());
}

// Keras's Adam is PyTorch's with ε/√(1−β2ᵗ) at step t: torch::optim::Adam stepped with that ε each step
// gives the fused pass's weights, and the unfused path (fuse false, torch::optim::Adam's kernels per
// parameter) the same. The ε is large (0.01) so that its placement moves the weights measurably.
TEST(FusedAdam, KerasEpsilonIsTorchAdamWithTheBiasCorrectedEpsilon) {
  at::manual_seed(2);
  auto w1 = at::randn({300, 41}).requires_grad_(true);
  auto w2 = w1.detach().clone().requires_grad_(true);
  auto w3 = w1.detach().clone().requires_grad_(true);
  auto w4 = w1.detach().clone().requires_grad_(true);
  const double eps = 1e-2, beta2 = 0.999;
  auto opts = torch::optim::AdamOptions(1e-2).betas({0.9, beta2}).eps(eps);
  torch::optim::Adam ref({w1}, opts);
  FusedAdam keras({w2}, opts);
  FusedAdam unfused({w3}, opts, AdamEpsilon::keras, /*fuse=*/false);
  FusedAdam pytorch({w4}, opts, AdamEpsilon::pytorch);
  EXPECT_EQ(keras.epsilon(), AdamEpsilon::keras);
  for (int t = 1; t <= 15; ++t) {
    auto g = at::randn({300, 41}) * 0.05;
    for (auto* w : {&w1, &w2, &w3, &w4}) w->mutable_grad() = g.clone();
    static_cast<torch::optim::AdamOptions&>(ref.param_groups()[0].options())
        .eps(eps / std::sqrt(1 - std::pow(beta2, t)));
    ref.step();
    keras.step();
    unfused.step();
    pytorch.step();
  }
  EXPECT_TRUE(close(w2.detach(), w1.detach()));
  EXPECT_TRUE(close(w3.detach(), w1.detach()));
  EXPECT_GT((w4.detach() - w2.detach()).abs().max().item<double>(), 1e-4) << "the placement made no difference";
}
