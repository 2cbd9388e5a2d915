// Reshape: Keras (channels-last) element order, −1 inference, conformance, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/reshape.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {
at::Tensor run(ReshapeOptions o, const Shape& keras_in, const at::Tensor& x) {
  Reshape r(o.input_shape(keras_in));
  Sequential m;
  m->add(r);
  return m->forward(x);
}
}  // namespace

TEST(Reshape, FlattensInKerasChannelsLastOrder) {
  // A Keras (H=2, W=3, C=2) image holding 0..11 in channels-last order, as a (N, C, H, W) tensor.
  auto keras = at::arange(12, at::kFloat).reshape({1, 2, 3, 2});
  auto x = keras.permute({0, 3, 1, 2}).contiguous();
  auto y = run(ReshapeOptions({-1}), {2, 3, 2}, x);
  EXPECT_TRUE(at::equal(y, at::arange(12, at::kFloat).reshape({1, 12}))) << y;
}

TEST(Reshape, VectorToImageFillsChannelsLast) {
  // (12) → Keras (3, 2, 2): Keras element [h][w][c] = 4h + 2w + c; the tensor is its (N, C, H, W) view.
  auto y = run(ReshapeOptions({3, 2, 2}), {12}, at::arange(12, at::kFloat).reshape({1, 12}));
  ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{1, 2, 3, 2}));
  EXPECT_FLOAT_EQ(y[0][1][2][0].item<float>(), 4 * 2 + 2 * 0 + 1);
  EXPECT_TRUE(at::equal(y, at::arange(12, at::kFloat).reshape({1, 3, 2, 2}).permute({0, 3, 1, 2})));
}

TEST(Reshape, InfersMinusOneAndConforms) {
  expect_layer_conformance(Reshape(ReshapeOptions({-1, 4})).ptr(), LayerConformance({2, 3, 4}, {6, 4}));
  expect_layer_conformance(Reshape(ReshapeOptions({4, 4, -1})).ptr(), LayerConformance({32}, {4, 4, 2}));
  expect_layer_conformance(Reshape(ReshapeOptions({12})).ptr(), LayerConformance({2, 3, 2}, {12}));
}

TEST(Reshape, Errors) {
  EXPECT_THROW(Reshape(ReshapeOptions({-1, -1})), ConfigError);
  EXPECT_THROW(Reshape(ReshapeOptions({0, 4})), ConfigError);
  EXPECT_THROW(Reshape(ReshapeOptions({})), ConfigError);
  Sequential m;
  try {
    m->add(Reshape(ReshapeOptions({5, -1}).input_shape(Shape{2, 3, 2})));
    FAIL() << "12 values reshaped to (5, -1)";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("reshape"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(None, 2, 3, 2)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(None, 5, -1)"), std::string::npos) << msg;
  }
}
