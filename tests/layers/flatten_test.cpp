// Flatten: Keras's (H, W, C) element order for images; (C, H, W) only when asked (Keras 1 "th").
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/registry.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::check_layer;

namespace {
// (N, C, H, W) = (1, 2, 1, 2) with x[0, c, 0, w] = 2c + w, flattened by a model of one Flatten.
at::Tensor flatten_2x1x2(FlattenOptions options) {
  Sequential m;
  m->add(Flatten(options.input_shape(Shape{1, 2, 2})));  // Keras (H, W, C) = (1, 2, 2)
  return m->forward(at::arange(4, at::kFloat).reshape({1, 2, 1, 2}));
}
}  // namespace

TEST(Flatten, ImageInKerasChannelsLastOrder) {
  check_layer(Flatten().ptr(), {36, 36, 64}, {82944}, 0);
  // Keras flattens (h, w, c) row-major: (0,0,0)=x[c0,w0]=0, (0,0,1)=x[c1,w0]=2, (0,1,0)=1, (0,1,1)=3.
  const at::Tensor y = flatten_2x1x2(FlattenOptions());
  EXPECT_TRUE(at::equal(y, at::tensor({0.f, 2.f, 1.f, 3.f}).reshape({1, 4}))) << y;
  EXPECT_FALSE(Flatten()->config().contains("element_order"));  // Keras's own config
}

TEST(Flatten, ChannelsFirstOrderOnlyWhenAskedAndWrittenInTheConfig) {
  const at::Tensor y = flatten_2x1x2(FlattenOptions().element_order("channels_first"));
  EXPECT_TRUE(at::equal(y, at::tensor({0.f, 1.f, 2.f, 3.f}).reshape({1, 4}))) << y;
  Flatten f(FlattenOptions().element_order("channels_first"));
  const auto config = f->config();
  EXPECT_EQ(config.value("element_order", ""), "channels_first");
  auto rebuilt = layer_from_json({{"class_name", "Flatten"}, {"config", config}});
  EXPECT_FALSE(std::dynamic_pointer_cast<FlattenImpl>(rebuilt)->flattens_channels_last());
}

TEST(Flatten, VectorAndSequenceInputsKeepTheirOrder) {
  Sequential m;
  m->add(Flatten(FlattenOptions().input_shape(Shape{2, 3})));  // (T, D): already Keras's order
  const at::Tensor x = at::arange(6, at::kFloat).reshape({1, 2, 3});
  EXPECT_TRUE(at::equal(m->forward(x), at::arange(6, at::kFloat).reshape({1, 6})));
}

TEST(Flatten, UnknownElementOrderIsRefusedNamingIt) {
  try {
    Flatten f(FlattenOptions().element_order("nchw"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("\"nchw\""), std::string::npos) << e.what();
  }
}
