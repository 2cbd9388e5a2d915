// The trainer's device prefetcher: a hand-over on the CPU, misuse refused; on CUDA (tests ending in
// _CUDA) training through it gives the CPU's losses, and both mixed policies train there.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

#include <torchfit/model/seed_cnn.h>
#include <torchfit/training/trainer.h>

#include "support/tiny_model.h"
#include "training/device_prefetcher.h"

using namespace torchfit;

TEST(DevicePrefetcher, OnTheCpuHandsTheBatchOverAndRefusesMisuse) {
  torchfit::detail::DevicePrefetcher p(c10::Device(c10::kCPU));
  EXPECT_FALSE(p.asynchronous());
  EXPECT_THROW(p.take(), std::logic_error);
  data::Batch b;
  b.x = at::arange(6.0).reshape({3, 2});
  b.y = at::arange(3);
  b.global_size = 6;
  p.start(b);
  EXPECT_TRUE(p.pending());
  EXPECT_THROW(p.start(b), std::logic_error);
  const auto got = p.take();
  EXPECT_FALSE(p.pending());
  EXPECT_TRUE(got.x.is_same(b.x));  // no copy on the CPU
  EXPECT_EQ(got.size, 3);
  EXPECT_EQ(got.global_size, 6);
  p.start(b);
  p.clear();
  EXPECT_FALSE(p.pending());
}

namespace {
std::vector<double> step_losses(const c10::Device& device) {
  at::manual_seed(4);
  Trainer t(torchfit::testing::tiny_mlp(4, 3), CompileOptions(), device);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(2);
  data::TensorIterator it(at::rand({40, 4}, gen), at::one_hot(at::arange(40) % 3, 3).to(at::kFloat), 8, true, 1);
  std::vector<double> losses;
  struct Recorder : Callback {
    std::vector<double>* out;
    void on_train_batch_end(int64_t, const Logs& logs) override { out->push_back(logs.at("batch_loss")); }
  };
  auto rec = std::make_shared<Recorder>();
  rec->out = &losses;
  t.fit(it, FitOptions().epochs(2).steps_per_epoch(5).verbose(0).callbacks({rec}));
  return losses;
}
}  // namespace

TEST(DevicePrefetcher, TrainingOnCudaSeesTheSameBatchesAsOnTheCpu_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  const auto cpu = step_losses(c10::Device(c10::kCPU));
  const auto cuda = step_losses(c10::Device(c10::kCUDA, 0));
  ASSERT_EQ(cpu.size(), 10u);
  ASSERT_EQ(cuda.size(), 10u);
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(cuda[i], cpu[i], 1e-4) << "step " << i + 1;
}

TEST(DevicePrefetcher, BothMixedPoliciesTrainOnCudaWithFloat32Variables_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  const c10::Device cuda(c10::kCUDA, 0);
  for (const char* policy : {"mixed_bfloat16", "mixed_float16"}) {
    at::manual_seed(5);
    Sequential model = seed_cnn(32, 3, 8);
    model->set_dtype_policy(policy);
    Trainer t(model, CompileOptions(), cuda);
    EXPECT_EQ(t.loss_scale_optimizer() != nullptr, std::string(policy) == "mixed_float16") << policy;
    const at::Tensor x = at::rand({8, 3, 32, 32}).to(cuda);
    const at::Tensor y = at::one_hot(at::arange(8) % 3, 3).to(at::kFloat).to(cuda);
    for (int i = 0; i < 5; ++i) EXPECT_TRUE(std::isfinite(t.train_step(x, y))) << policy;
    EXPECT_EQ(model->forward(x).scalar_type(), at::kFloat) << policy;
    for (const auto& p : model->parameters()) EXPECT_EQ(p.scalar_type(), at::kFloat) << policy;
  }
}

TEST(DevicePrefetcher, Float16LossScalingSkipsAnInfStepOnCuda_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  const c10::Device cuda(c10::kCUDA, 0);
  at::manual_seed(6);
  Sequential model = seed_cnn(32, 3, 8);
  model->set_dtype_policy("mixed_float16");
  Trainer t(model, CompileOptions(), cuda);
  const at::Tensor x = at::rand({8, 3, 32, 32}).to(cuda);
  const at::Tensor y = at::one_hot(at::arange(8) % 3, 3).to(at::kFloat).to(cuda);
  t.train_step(x, y);
  const double scale = t.loss_scale_optimizer()->loss_scale();
  const int64_t skipped = t.loss_scale_optimizer()->skipped_steps();  // 32768 may overflow float16 at first
  const at::Tensor before = model->parameters().front().detach().clone();
  auto param = model->parameters().front();
  const unsigned hook =
      param.register_hook([](const at::Tensor& g) { return at::full_like(g, std::numeric_limits<float>::infinity()); });
  t.train_step(x, y);
  param.remove_hook(hook);
  EXPECT_TRUE(at::equal(before, model->parameters().front().detach()));
  EXPECT_EQ(t.loss_scale_optimizer()->loss_scale(), scale / 2);
  EXPECT_EQ(t.loss_scale_optimizer()->skipped_steps(), skipped + 1);
}

TEST(DevicePrefetcher, PinnedBatchesOnlyWhereAGpuIsUsable) {
  data::TensorIterator it(at::rand({6, 2}), at::arange(6), 3);
  it.set_pin_memory(true);
  EXPECT_EQ(it.pin_memory(), at::hasCUDA());  // pinning needs the CUDA driver
  const data::Batch b = it.next();
  EXPECT_EQ(b.x.is_pinned(), at::hasCUDA());
  it.set_pin_memory(false);
  EXPECT_FALSE(it.next().x.is_pinned());
}
