// Sequential's activation memory layout (set_memory_format): same results as the contiguous layout,
// in inference and in training, and a clear error for a bad name.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/layers/activation.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/max_pooling2d.h>
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

// Conv2D(relu) → MaxPooling2D runs as conv → pool → ReLU: the same outputs and the same gradients as
// the layers as written, for valid and same pooling, in both memory formats, also when the pool is
// the last layer (forward_logits keeps the ReLU, which belongs to the convolution).
TEST(PoolBeforeRelu, SameOutputsAndGradientsAsTheLayersAsWritten) {
  for (const std::string padding : {"valid", "same"}) {
    for (const std::string format : {"contiguous", "channels_last"}) {
      at::manual_seed(3);
      Sequential m("reorder");
      m->add(Conv2D(Conv2DOptions(4, {3, 3}).activation("relu").input_shape(Shape{11, 11, 2})));
      m->add(MaxPooling2D(MaxPooling2DOptions().padding(padding)));
      m->set_memory_format(format);
      const at::Tensor x = at::randn({3, 2, 11, 11});
      const at::Tensor g = at::randn_like(m->forward(x));
      std::vector<at::Tensor> outputs, grads;
      for (bool on : {true, false}) {
        m->set_pool_before_relu(on);
        m->zero_grad();
        const at::Tensor y = m->forward(x);
        EXPECT_TRUE(at::equal(y, m->forward_logits(x))) << "the pool is last: logits = output";
        (y * g).sum().backward();
        outputs.push_back(y.detach());
        grads.push_back(m->parameters()[0].grad().clone());
      }
      EXPECT_TRUE(at::equal(outputs[0], outputs[1])) << padding << " " << format;
      EXPECT_TRUE(at::allclose(grads[0], grads[1], 1e-5, 1e-6)) << padding << " " << format;
      EXPECT_GT(outputs[0].eq(0).sum().item<int64_t>(), 0) << "some windows are all negative";
    }
  }
}

TEST(PoolBeforeRelu, OnlyReluConvolutionsFollowedByMaxPoolingAreReordered) {
  // A sigmoid convolution before a pool keeps its order: outputs equal with the switch on and off.
  at::manual_seed(4);
  Sequential m("sigmoid");
  m->add(Conv2D(Conv2DOptions(2, {3, 3}).activation("sigmoid").input_shape(Shape{8, 8, 1})));
  m->add(MaxPooling2D(MaxPooling2DOptions()));
  const at::Tensor x = at::randn({2, 1, 8, 8});
  const at::Tensor on = m->forward(x);
  m->set_pool_before_relu(false);
  EXPECT_TRUE(at::equal(on, m->forward(x)));
  EXPECT_TRUE(at::allclose(m->forward_logits(x), m->forward(x))) << "pool last: logits = output";
}

TEST(PoolBeforeRelu, ActivationReluLayerBeforeMaxPoolingIsReorderedToo) {
  at::manual_seed(5);
  Sequential m("activation");
  m->add(Conv2D(Conv2DOptions(3, {3, 3}).input_shape(Shape{10, 10, 2})));
  m->add(Activation("relu"));
  m->add(MaxPooling2D(MaxPooling2DOptions()));
  const at::Tensor x = at::randn({2, 2, 10, 10});
  const at::Tensor on = m->forward(x);
  m->set_pool_before_relu(false);
  EXPECT_TRUE(at::equal(on, m->forward(x)));
  EXPECT_GT(on.eq(0).sum().item<int64_t>(), 0);
}
