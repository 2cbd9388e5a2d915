// Sequential's activation memory layout (set_memory_format): same results as the contiguous layout,
// in inference and in training, and a clear error for a bad name.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

namespace {
// The same weights in two models: copy every parameter of `from` into `to`.
void copy_weights(Sequential& from, Sequential& to) {
  torch::NoGradGuard no_grad;
  auto src = from->parameters(), dst = to->parameters();
  ASSERT_EQ(src.size(), dst.size());
  for (size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}
}  // namespace

TEST(MemoryFormat, DefaultIsAutoAndBadNamesAreConfigErrors) {
  Sequential m = seed_cnn(32, 4, 8);
  EXPECT_EQ(m->memory_format(), "auto");
  m->set_memory_format("contiguous");
  EXPECT_EQ(m->memory_format(), "contiguous");
  try {
    m->set_memory_format("nhwc");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"nhwc\""), std::string::npos) << e.what();
  }
  EXPECT_EQ(m->memory_format(), "contiguous") << "a refused value leaves the setting alone";
}

TEST(MemoryFormat, ChannelsLastGivesTheSameOutputsAsContiguous) {
  at::manual_seed(0);
  Sequential a = seed_cnn(32, 4, 8), b = seed_cnn(32, 4, 8);
  copy_weights(a, b);
  a->set_memory_format("auto");  // CPU: channels_last
  b->set_memory_format("contiguous");
  a->eval(), b->eval();
  const at::Tensor x = at::rand({5, 3, 32, 32});
  const at::Tensor ya = a->forward(x), yb = b->forward(x);
  EXPECT_TRUE(at::allclose(ya, yb, 1e-5, 1e-6)) << (ya - yb).abs().max().item<float>();
  EXPECT_TRUE(at::allclose(a->forward_logits(x), b->forward_logits(x), 1e-5, 1e-5));
  EXPECT_TRUE(x.is_contiguous()) << "the caller's input is not modified";
}

TEST(MemoryFormat, FourDimensionalOutputsComeBackContiguous) {
  Sequential m("conv_only");
  m->add(Conv2D(Conv2DOptions(6, {3, 3}).input_shape(Shape{9, 9, 2})));
  m->set_memory_format("channels_last");
  const at::Tensor y = m->forward(at::rand({2, 2, 9, 9}));
  EXPECT_EQ(y.sizes(), (at::IntArrayRef{2, 6, 7, 7}));
  EXPECT_TRUE(y.is_contiguous());
}

TEST(MemoryFormat, TrainingStepsMatchContiguous) {
  at::manual_seed(0);
  Sequential a = seed_cnn(32, 4, 8), b = seed_cnn(32, 4, 8);
  copy_weights(a, b);
  a->set_memory_format("channels_last");
  b->set_memory_format("contiguous");
  // Dropout draws from the global generator: the same seed before each model's step.
  Trainer ta(a, CompileOptions()), tb(b, CompileOptions());
  const at::Tensor x = at::rand({6, 3, 32, 32});
  const at::Tensor y = at::one_hot(at::arange(6) % 4, 4).to(at::kFloat);
  for (int s = 0; s < 3; ++s) {
    at::manual_seed(100 + s);
    const double la = ta.train_step(x, y);
    at::manual_seed(100 + s);
    const double lb = tb.train_step(x, y);
    EXPECT_NEAR(la, lb, 1e-5 * std::max(1.0, std::abs(lb))) << "step " << s;
  }
  // Adam moves every weight by ~lr = 1e-3 per step whatever the gradient's size, so float rounding in
  // a near-zero gradient can show as ~1e-5; a gradient paired with the wrong weight shows as ~1e-3.
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    const at::Tensor d = (pa[i] - pb[i]).abs();
    EXPECT_LT(d.max().item<float>(), 1e-4) << "parameter " << i;
    EXPECT_LT(d.mean().item<float>(), 1e-6) << "parameter " << i;
  }
}
