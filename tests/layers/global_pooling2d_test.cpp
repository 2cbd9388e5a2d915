// GlobalAveragePooling1D/2D/3D and GlobalMaxPooling1D/2D/3D: known values, volumes against the NumPy reference,
// keepdims, conformance, names, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;
using torchfit::testing::run_layer;

TEST(GlobalPooling2D, KnownValues) {
  // Channel 0 = 0..5, channel 1 = 10·(0..5) over a 2×3 image.
  auto x = at::stack({at::arange(6, at::kFloat), at::arange(6, at::kFloat) * 10}).reshape({1, 2, 2, 3});
  auto avg = run_layer(GlobalAveragePooling2D().ptr(), {2, 3, 2}, x);
  EXPECT_TRUE(at::allclose(avg, at::tensor({2.5f, 25.0f}).reshape({1, 2}))) << avg;
  auto mx = run_layer(GlobalMaxPooling2D().ptr(), {2, 3, 2}, x);
  EXPECT_TRUE(at::equal(mx, at::tensor({5.0f, 50.0f}).reshape({1, 2}))) << mx;
}

TEST(GlobalPooling2D, ConformanceNamesAndErrors) {
  expect_layer_conformance(GlobalAveragePooling2D().ptr(), LayerConformance({5, 4, 3}, {3}));
  expect_layer_conformance(GlobalMaxPooling2D().ptr(), LayerConformance({5, 4, 3}, {3}));
  EXPECT_EQ(keras_snake_case("GlobalMaxPooling2D"), "global_max_pooling2d");
  Sequential m;
  EXPECT_THROW(m->add(GlobalAveragePooling2D(GlobalPooling2DOptions().input_shape(Shape{7}))), ConfigError);
}

// Keras's keepdims and the 1-D layers, against the definition written out (mean / max over the pooled axes).
TEST(GlobalPooling, KeepdimsAndSequences) {
  const at::Tensor image = at::randn({2, 3, 4, 5});
  GlobalAveragePooling2D avg(GlobalPoolingOptions().keepdims(true));
  avg->build({4, 5, 3});
  EXPECT_EQ(avg->output_shape(), (Shape{1, 1, 3}));
  EXPECT_TRUE(at::allclose(avg->forward(image), image.mean({2, 3}, true)));
  const at::Tensor seq = at::randn({2, 6, 3});  // Keras (steps, C), held in Keras's order
  GlobalMaxPooling1D max1;
  max1->build({6, 3});
  EXPECT_EQ(max1->output_shape(), (Shape{3}));
  EXPECT_TRUE(at::equal(max1->forward(seq), std::get<0>(seq.max(1))));
  GlobalAveragePooling1D avg1(GlobalPoolingOptions().keepdims(true));
  avg1->build({6, 3});
  EXPECT_EQ(avg1->output_shape(), (Shape{1, 3}));
  EXPECT_TRUE(at::allclose(avg1->forward(seq), seq.sum(1, true) / 6.0));
  torchfit::testing::expect_layer_conformance(GlobalAveragePooling1D().ptr(),
                                              torchfit::testing::LayerConformance({6, 3}, {3}));
  torchfit::testing::expect_layer_conformance(GlobalMaxPooling2D(GlobalPoolingOptions().keepdims(true)).ptr(),
                                              torchfit::testing::LayerConformance({4, 5, 3}, {1, 1, 3}));
  EXPECT_THROW(GlobalMaxPooling1D()->build({4, 5, 3}), ConfigError);
  EXPECT_THROW(GlobalAveragePooling2D()->build({6, 3}), ConfigError);
}

// GlobalAveragePooling3D / GlobalMaxPooling3D: volumes (N, D, H, W, C) against the NumPy reference (Keras's
// mean / max over the depth, rows and columns), keepdims (1, 1, 1, C), conformance, errors naming the layer.
TEST(GlobalPooling3D, MatchesNumPyOverTheVoxelsWithAndWithoutKeepdims) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const bool keepdims : {false, true}) {
    SCOPED_TRACE(keepdims ? "keepdims" : "no keepdims");
    auto [x, avg] = torchfit::testing::random_forward(
        GlobalAveragePooling3D(GlobalPoolingOptions().keepdims(keepdims)).ptr(), {3, 4, 5, 2});
    torchfit::testing::expect_matches_reference(
        avg, torchfit::testing::keras_reference(
                 {{"op", "global_avg_pool"}, {"x", torchfit::testing::tensor_json(x)}, {"keepdims", keepdims}}));
    auto [x2, max] = torchfit::testing::random_forward(
        GlobalMaxPooling3D(GlobalPoolingOptions().keepdims(keepdims)).ptr(), {5, 3, 3, 4});
    torchfit::testing::expect_matches_reference(
        max, torchfit::testing::keras_reference(
                 {{"op", "global_max_pool"}, {"x", torchfit::testing::tensor_json(x2)}, {"keepdims", keepdims}}));
  }
}

TEST(GlobalPooling3D, ConformanceConfigAndErrors) {
  torchfit::testing::expect_layer_conformance(GlobalAveragePooling3D().ptr(),
                                              torchfit::testing::LayerConformance({3, 4, 5, 2}, {2}));
  torchfit::testing::expect_layer_conformance(GlobalMaxPooling3D(GlobalPoolingOptions().keepdims(true)).ptr(),
                                              torchfit::testing::LayerConformance({3, 4, 5, 2}, {1, 1, 1, 2}));
  auto layer = layer_from_json({{"class_name", "GlobalMaxPooling3D"}, {"config", {{"name", "g"}}}});
  EXPECT_EQ(layer->config(), (nlohmann::json{{"name", "g"}, {"keepdims", false}}));
  try {
    GlobalAveragePooling3D(GlobalPoolingOptions().name("gap3"))->build({4, 5, 3});
    FAIL() << "an image accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'gap3' (GlobalAveragePooling3D) expects a volume (D, H, W, C)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(GlobalMaxPooling3D()->build({6, 3}), ConfigError);
}
