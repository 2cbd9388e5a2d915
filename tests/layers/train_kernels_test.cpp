// torchfit's own training kernels against LibTorch's: Conv2D's weight gradient (layers/conv_weight_grad.h)
// against the float64 convolution backward (ATen's reference kernels) on every vector path this CPU has,
// strides, padding, odd sizes, filter counts; MaxPooling2D's index-free pooling (layers/max_pool_train.h)
// against ATen's max_pool2d_with_indices and its backward, exactly, ties and NaN included; and both
// through their layers in training.
#include <gtest/gtest.h>

#include <limits>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/model/sequential.h>

#include "layers/conv_weight_grad.h"
#include "layers/dense_weight_grad.h"
#include "layers/max_pool_train.h"

using namespace torchfit;

namespace {

struct Case {
  int64_t n, ci, h, w, co, kh, kw, sh, sw, pt, pl;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p) { return (in + 2 * p - k) / s + 1; }

// float64 gradients of the kernel and bias.
std::tuple<at::Tensor, at::Tensor> reference(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w,
                                             const Case& c) {
  auto r = at::convolution_backward(gy.to(at::kDouble).contiguous(), x.to(at::kDouble).contiguous(),
                                    w.to(at::kDouble).contiguous(), at::IntArrayRef{c.co}, {c.sh, c.sw}, {c.pt, c.pl},
                                    {1, 1}, false, {0, 0}, 1, {false, true, true});
  return {std::get<1>(r), std::get<2>(r)};
}

void expect_close(const at::Tensor& got, const at::Tensor& ref, const std::string& what) {
  ASSERT_EQ(got.sizes(), ref.sizes()) << what;
  const double scale = ref.abs().max().item<double>();
  const double err = (got.to(at::kDouble) - ref).abs().max().item<double>();
  EXPECT_LE(err, 2e-6 * scale + 1e-9) << what << ": max |error| " << err << " of max |gradient| " << scale;
}

void check_case(const Case& c, int level, bool channels_last_weight) {
  at::manual_seed(c.n * 1000 + c.ci * 100 + c.co);
  const int64_t ho = out_size(c.h, c.kh, c.sh, c.pt), wo = out_size(c.w, c.kw, c.sw, c.pl);
  const auto x = at::randn({c.n, c.ci, c.h, c.w}).contiguous(at::MemoryFormat::ChannelsLast);
  auto w = at::randn({c.co, c.ci, c.kh, c.kw});
  if (channels_last_weight) w = w.contiguous(at::MemoryFormat::ChannelsLast);
  const auto gy = at::randn({c.n, c.co, ho, wo}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto got = torchfit::detail::conv2d_weight_grad(gy, x, w, {c.sh, c.sw}, {c.pt, c.pl}, true, level);
  const auto [gw, gb] = reference(gy, x, w, c);
  const std::string what = "n" + std::to_string(c.n) + " ci" + std::to_string(c.ci) + " " + std::to_string(c.h) + "x" +
                           std::to_string(c.w) + " co" + std::to_string(c.co) + " k" + std::to_string(c.kh) + "x" +
                           std::to_string(c.kw) + " s" + std::to_string(c.sh) + "," + std::to_string(c.sw) + " p" +
                           std::to_string(c.pt) + "," + std::to_string(c.pl) + " level " + std::to_string(level);
  expect_close(got[0], gw, what + " kernel");
  expect_close(got[1], gb, what + " bias");
  EXPECT_EQ(got[0].strides(), w.strides()) << what << ": the gradient keeps the weight's layout";
}

// Whether y's autograd graph has a node whose name contains `name`.
bool graph_has(const at::Tensor& y, const std::string& name) {
  std::vector<torch::autograd::Node*> todo{y.grad_fn().get()};
  while (!todo.empty()) {
    torch::autograd::Node* node = todo.back();
    todo.pop_back();
    if (node == nullptr) continue;
    if (node->name().find(name) != std::string::npos) return true;
    for (const auto& edge : node->next_edges()) todo.push_back(edge.function.get());
  }
  return false;
}

}  // namespace

TEST(ConvWeightGrad, MatchesFloat64ReferenceOnEveryVectorPath) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  const std::vector<Case> cases = {
      {4, 3, 30, 30, 32, 3, 3, 1, 1, 0, 0},   // the article's first layer, smaller images
      {3, 32, 14, 13, 64, 3, 3, 1, 1, 0, 0},  // its second layer, odd width, 3 images on the threads
      {2, 5, 9, 11, 16, 3, 3, 1, 1, 1, 1},    // "same": edge columns and rows
      {2, 4, 11, 13, 24, 3, 3, 2, 2, 0, 0},   // stride 2, 24 filters (AVX2 blocks of 8 only)
      {1, 6, 12, 10, 32, 5, 5, 2, 2, 2, 2},   // 5x5, stride 2 with padding, one image
      {2, 7, 6, 9, 8, 1, 1, 1, 1, 0, 0},      // 1x1, 8 filters
      {2, 3, 8, 9, 16, 3, 1, 1, 2, 1, 0},     // 3x1 kernel, unequal strides
      {2, 2, 7, 8, 16, 1, 5, 1, 1, 0, 2},     // 1x5 kernel, padding on the width only
      {2, 1, 10, 10, 8, 3, 3, 1, 1, 0, 0},    // one input channel
      {2, 3, 2, 2, 16, 3, 3, 1, 1, 1, 1},     // image smaller than the kernel: only edge pixels
  };
  for (int level = 1; level <= torchfit::detail::simd_level(); ++level) {
    for (const auto& c : cases) {
      check_case(c, level, false);
      check_case(c, level, true);
    }
  }
}

TEST(ConvWeightGrad, ResultDoesNotDependOnThreadsBeyondRounding) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  const Case c{5, 8, 12, 12, 16, 3, 3, 1, 1, 1, 1};
  const int before = at::get_num_threads();
  for (int threads : {1, 2, 3}) {
    at::set_num_threads(threads);
    check_case(c, 0, false);
  }
  at::set_num_threads(before);
}

TEST(ConvWeightGrad, RefusesWhatItCannotCompute) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  const auto x = at::randn({1, 3, 8, 8}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto gy = at::randn({1, 12, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  EXPECT_THROW(torchfit::detail::conv2d_weight_grad(gy, x, at::randn({12, 3, 3, 3}), {1, 1}, {0, 0}, true), c10::Error);
  EXPECT_THROW(torchfit::detail::conv2d_weight_grad(gy, x, at::randn({12, 3, 3, 3}), {1, 1}, {0, 0}, true, 3),
               c10::Error);
  // Where it does not apply, Conv2D keeps at::conv2d: groups, dilation, float64, no weight gradient.
  const auto w = at::randn({16, 3, 3, 3}).requires_grad_();
  EXPECT_TRUE(torchfit::detail::conv2d_train_applies(x, w, {1, 1}, 1));
  EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x, w, {2, 2}, 1));
  EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x, w, {1, 1}, 3));
  EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x.to(at::kDouble), w.to(at::kDouble), {1, 1}, 1));
  EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x, w.detach(), {1, 1}, 1));
  EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x.contiguous(), w, {1, 1}, 1));
  {
    at::NoGradGuard no_grad;
    EXPECT_FALSE(torchfit::detail::conv2d_train_applies(x, w, {1, 1}, 1));
  }
}

// A Conv2D layer in training takes this path (asserted) and its gradients, input gradient included,
// are those of a float64 at::conv2d with the same weights — with TensorFlow's asymmetric "same" padding.
TEST(ConvWeightGrad, Conv2DLayerGradientsMatchFloat64Autograd) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  at::manual_seed(3);
  Conv2D conv(Conv2DOptions(16, 3).padding("same").strides(2).input_shape(Shape{10, 9, 4}));
  Sequential m;
  m->add(conv);
  const auto x = at::randn({3, 4, 10, 9}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
  const auto y = m->forward(x);
  ASSERT_TRUE(graph_has(y, "Conv2dTrainFunction"));
  const auto r = at::randn(y.sizes());
  (y * r).sum().backward();

  const auto xd = x.detach().to(at::kDouble).requires_grad_();
  const auto wd = conv->kernel.detach().to(at::kDouble).requires_grad_();
  const auto bd = conv->bias.detach().to(at::kDouble).requires_grad_();
  // TensorFlow's "same" for 10x9, kernel 3, stride 2: rows (0, 1), columns (1, 1).
  const auto yd = at::conv2d(at::constant_pad_nd(xd, {1, 1, 0, 1}), wd, bd, {2, 2});
  ASSERT_EQ(yd.sizes(), y.sizes());
  EXPECT_LE((y.detach().to(at::kDouble) - yd.detach()).abs().max().item<double>(), 1e-5);
  (yd * r.to(at::kDouble)).sum().backward();
  expect_close(conv->kernel.grad(), wd.grad(), "Conv2D kernel");
  expect_close(conv->bias.grad(), bd.grad(), "Conv2D bias");
  expect_close(x.grad(), xd.grad(), "Conv2D input");
}

namespace {

// Inputs with many ties (small integers) and, optionally, NaNs.
at::Tensor pool_input(int64_t n, int64_t c, int64_t h, int64_t w, bool nans) {
  auto x = at::randint(-3, 4, {n, c, h, w}).to(at::kFloat);
  if (nans) x.masked_fill_(at::rand({n, c, h, w}) < 0.05, std::numeric_limits<float>::quiet_NaN());
  return x.contiguous(at::MemoryFormat::ChannelsLast);
}

void expect_same(const at::Tensor& got, const at::Tensor& want, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(at::equal(at::isnan(got), at::isnan(want))) << what << ": NaNs differ";
  EXPECT_TRUE(at::equal(at::nan_to_num(got, 1e9), at::nan_to_num(want, 1e9))) << what << ": values differ";
}

// max_pool2d_train (with relu or not) against ATen's max_pool2d_with_indices (then relu_), output and
// input gradient bit for bit.
void check_pool_case(int64_t n, int64_t c, int64_t h, int64_t w, int64_t ph, int64_t pw, bool nans, bool relu) {
  at::manual_seed(c + h);
  const auto x = pool_input(n, c, h, w, nans).requires_grad_();
  const std::vector<int64_t> window{ph, pw};
  ASSERT_TRUE(torchfit::detail::max_pool2d_train_applies(x, window, window));
  const auto y = torchfit::detail::max_pool2d_train(x, window, window, relu);
  ASSERT_TRUE(graph_has(y, "MaxPool2dTrainFunction"));
  const auto gy = at::randn(y.sizes()).contiguous(at::MemoryFormat::ChannelsLast);
  y.backward(gy);

  const auto xr = x.detach().clone().requires_grad_();
  auto yr = std::get<0>(at::max_pool2d_with_indices(xr, window, window));
  if (relu) yr = yr.relu_();
  yr.backward(gy);
  const std::string what = std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
                           std::to_string(w) + " pool " + std::to_string(ph) + "x" + std::to_string(pw) +
                           (nans ? " with NaNs" : "") + (relu ? " then relu" : "");
  expect_same(y.detach(), yr.detach(), what + " output");
  expect_same(x.grad(), xr.grad(), what + " input gradient");
}

}  // namespace

TEST(MaxPoolTrain, MatchesAtenExactlyWithTiesNaNsAndUncoveredEdges) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  struct P {
    int64_t n, c, h, w, ph, pw;
  };  // relu: max pooling then relu_, as a model runs Conv2D(relu) → MaxPooling2D
  const std::vector<P> cases = {{3, 32, 12, 12, 2, 2}, {2, 16, 9, 11, 2, 2}, {1, 8, 7, 8, 3, 3},
                                {2, 24, 6, 9, 2, 3},   {2, 64, 5, 5, 1, 1},  {1, 8, 3, 3, 3, 3}};
  for (bool relu : {false, true}) {
    for (bool nans : {false, true}) {
      for (const auto& p : cases) check_pool_case(p.n, p.c, p.h, p.w, p.ph, p.pw, nans, relu);
    }
  }
}

TEST(MaxPoolTrain, AppliesOnlyWhereItCan) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  const auto x = pool_input(1, 8, 6, 6, false).requires_grad_();
  EXPECT_TRUE(torchfit::detail::max_pool2d_train_applies(x, {2, 2}, {2, 2}));
  EXPECT_FALSE(torchfit::detail::max_pool2d_train_applies(x, {3, 3}, {2, 2}));  // overlapping windows
  EXPECT_FALSE(torchfit::detail::max_pool2d_train_applies(x.detach(), {2, 2}, {2, 2}));
  EXPECT_FALSE(torchfit::detail::max_pool2d_train_applies(x.contiguous(), {2, 2}, {2, 2}));
  EXPECT_FALSE(
      torchfit::detail::max_pool2d_train_applies(pool_input(1, 6, 6, 6, false).requires_grad_(), {2, 2}, {2, 2}));
  EXPECT_FALSE(torchfit::detail::max_pool2d_train_applies(x, {7, 7}, {7, 7}));  // larger than the input
  EXPECT_THROW(torchfit::detail::max_pool2d_input_grad(at::zeros({1, 8, 2, 2}), x.detach(), {2, 2}), c10::Error);
}

// MaxPooling2D after a Conv2D(relu) in a Sequential: the model pools before the ReLU and the pooling takes
// this path; the gradients of the whole stack are those of the same stack run by ATen's kernels in float64.
TEST(MaxPoolTrain, ConvReluPoolStackGradientsMatchFloat64) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  at::manual_seed(11);
  Conv2D conv(Conv2DOptions(16, 3).activation("relu").input_shape(Shape{13, 12, 3}));
  MaxPooling2D pool(MaxPooling2DOptions(2));
  Sequential m;
  m->add(conv);
  m->add(pool);
  const auto x = at::randn({2, 3, 13, 12}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto y = m->forward(x);
  ASSERT_TRUE(graph_has(y, "MaxPool2dTrainFunction"));
  ASSERT_TRUE(graph_has(y, "Conv2dTrainFunction"));
  const auto r = at::randn(y.sizes());
  (y * r).sum().backward();

  const auto wd = conv->kernel.detach().to(at::kDouble).requires_grad_();
  const auto bd = conv->bias.detach().to(at::kDouble).requires_grad_();
  const auto yd = at::max_pool2d(at::relu(at::conv2d(x.to(at::kDouble), wd, bd)), {2, 2}, {2, 2});
  ASSERT_EQ(yd.sizes(), y.sizes());
  EXPECT_LE((y.detach().to(at::kDouble) - yd.detach()).abs().max().item<double>(), 1e-5);
  (yd * r.to(at::kDouble)).sum().backward();
  expect_close(conv->kernel.grad(), wd.grad(), "Conv2D kernel under MaxPooling2D");
  expect_close(conv->bias.grad(), bd.grad(), "Conv2D bias under MaxPooling2D");
}

// A gradient penalty (create_graph, as WGAN-GP or input-gradient regularisation) through Conv2D(relu) →
// MaxPooling2D: the backward passes run on ATen's differentiable operators, so the penalty's gradient
// reaches the kernel through both layers, as in float64 ATen.
TEST(MaxPoolTrain, GradientPenaltyThroughConvAndPoolIsDifferentiable) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  at::manual_seed(5);
  Conv2D conv(Conv2DOptions(8, 3).activation("relu").input_shape(Shape{9, 8, 2}));
  Sequential m;
  m->add(conv);
  m->add(MaxPooling2D(MaxPooling2DOptions(2)));
  const auto x0 = at::randn({2, 2, 9, 8});
  const auto x = x0.contiguous(at::MemoryFormat::ChannelsLast).requires_grad_();
  const auto y = m->forward(x);
  ASSERT_TRUE(graph_has(y, "MaxPool2dTrainFunction"));
  const auto gx = torch::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
  (gx * gx).sum().backward();

  const auto xd = x0.to(at::kDouble).requires_grad_();
  const auto wd = conv->kernel.detach().to(at::kDouble).requires_grad_();
  const auto bd = conv->bias.detach().to(at::kDouble).requires_grad_();
  const auto yd = at::relu(at::max_pool2d(at::conv2d(xd, wd, bd), {2, 2}, {2, 2}));
  const auto gxd = torch::autograd::grad({(yd * yd).sum()}, {xd}, {}, true, true)[0];
  (gxd * gxd).sum().backward();
  expect_close(gx.detach(), gxd.detach(), "input gradient");
  expect_close(conv->kernel.grad(), wd.grad(), "kernel gradient of the penalty");
  expect_close(conv->bias.grad(), bd.grad(), "bias gradient of the penalty");
}

// Without a bias (the convolutions before BatchNormalization in residual models).
TEST(ConvWeightGrad, Conv2DWithoutBiasTakesThePathToo) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  at::manual_seed(9);
  Conv2D conv(Conv2DOptions(8, 3).use_bias(false).padding("same").input_shape(Shape{7, 6, 3}));
  Sequential m;
  m->add(conv);
  const auto x = at::randn({2, 3, 7, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto y = m->forward(x);
  ASSERT_TRUE(graph_has(y, "Conv2dTrainFunction"));
  const auto r = at::randn(y.sizes());
  (y * r).sum().backward();
  const auto wd = conv->kernel.detach().to(at::kDouble).requires_grad_();
  (at::conv2d(x.to(at::kDouble), wd, {}, {1, 1}, {1, 1}) * r.to(at::kDouble)).sum().backward();
  expect_close(conv->kernel.grad(), wd.grad(), "Conv2D kernel without bias");
}

TEST(DenseWeightGrad, MatchesFloat64ProductOnEveryVectorPath) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  // (batch, units, inputs): the article's Dense shape scaled down, odd sizes around the vector and
  // block widths (16/32 inputs, 256 per task, 6/12 units), one sample, a large batch.
  const std::vector<std::array<int64_t, 3>> cases = {{32, 64, 5184}, {3, 13, 37}, {1, 7, 300}, {64, 10, 513},
                                                     {5, 1, 16},     {2, 25, 8},  {0, 4, 40}};
  for (int level = 1; level <= torchfit::detail::simd_level(); ++level) {
    for (const auto& [n, units, inputs] : cases) {
      at::manual_seed(n + units + inputs);
      const auto gy = at::randn({n, units});
      const auto x = at::randn({n, inputs});
      const auto got = torchfit::detail::dense_weight_grad(gy, x, level);
      const auto ref = gy.to(at::kDouble).t().mm(x.to(at::kDouble));
      const std::string what = "batch " + std::to_string(n) + " units " + std::to_string(units) + " inputs " +
                               std::to_string(inputs) + " level " + std::to_string(level);
      ASSERT_TRUE(got.is_contiguous()) << what;
      if (n == 0) {
        EXPECT_EQ(got.abs().max().item<float>(), 0.0f) << what;
      } else {
        expect_close(got, ref, what);
      }
    }
  }
  EXPECT_THROW(torchfit::detail::dense_weight_grad(at::randn({2, 3}), at::randn({3, 4})), c10::Error);
  EXPECT_THROW(torchfit::detail::dense_weight_grad(at::randn({2, 3}, at::kDouble), at::randn({2, 4}, at::kDouble)),
               c10::Error);
}

// Dense layers in training (with and without bias) take the path; gradients of kernel, bias and input
// are those of float64 at::linear; under create_graph the kernel gradient stays differentiable.
TEST(DenseWeightGrad, DenseLayersMatchFloat64AutogradAndCreateGraph) {
  if (torchfit::detail::simd_level() == 0) GTEST_SKIP() << "this CPU (or ATEN_CPU_CAPABILITY) has no AVX2+FMA path";
  at::manual_seed(4);
  Dense hidden(DenseOptions(12).activation("relu").input_shape(Shape{40}));
  Dense out(DenseOptions(5).use_bias(false));
  Sequential m;
  m->add(hidden);
  m->add(out);
  const auto x0 = at::randn({6, 40});
  const auto x = x0.clone().requires_grad_();
  const auto y = m->forward(x);
  ASSERT_TRUE(graph_has(y, "LinearTrainFunction"));
  const auto gx = torch::autograd::grad({(y * y).sum()}, {x}, {}, true, true)[0];
  ((y * y).sum() + (gx * gx).sum()).backward();

  const auto xd = x0.to(at::kDouble).requires_grad_();
  const auto w1 = hidden->kernel.detach().to(at::kDouble).requires_grad_();
  const auto b1 = hidden->bias.detach().to(at::kDouble).requires_grad_();
  const auto w2 = out->kernel.detach().to(at::kDouble).requires_grad_();
  const auto yd = at::linear(at::relu(at::linear(xd, w1, b1)), w2);
  const auto gxd = torch::autograd::grad({(yd * yd).sum()}, {xd}, {}, true, true)[0];
  ((yd * yd).sum() + (gxd * gxd).sum()).backward();
  expect_close(gx.detach(), gxd.detach(), "input gradient");
  expect_close(hidden->kernel.grad(), w1.grad(), "hidden kernel");
  expect_close(hidden->bias.grad(), b1.grad(), "hidden bias");
  expect_close(out->kernel.grad(), w2.grad(), "output kernel (no bias)");
}
