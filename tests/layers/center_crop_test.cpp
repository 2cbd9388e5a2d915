// CenterCrop (keras.layers.CenterCrop, Keras 3): the central window of a larger image (odd rows and columns
// left over), smart_resize of a smaller one (on one axis or both), against the float64 NumPy reference written
// from Keras 3's transform_images (tests/layers/reference/keras_layers_reference.py); the input gradient
// against the reference's central differences; conformance, Keras 3 config, errors naming the layer.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/center_crop.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

struct CropCase {
  Shape in;
  int64_t height, width;
};

// Larger on both axes (even and odd differences), equal, smaller on one axis, smaller on both.
const CropCase kCases[] = {{{7, 9, 2}, 4, 4}, {{6, 9, 2}, 3, 5}, {{5, 7, 2}, 5, 7},
                           {{5, 7, 2}, 6, 4}, {{4, 5, 2}, 6, 9}, {{9, 3, 1}, 4, 8}};

}  // namespace

TEST(CenterCrop, ConformanceAndKerasDefaults) {
  expect_layer_conformance(CenterCrop(CenterCropOptions(3, 4)).ptr(), LayerConformance({6, 7, 2}, {3, 4, 2}));
  expect_layer_conformance(CenterCrop(CenterCropOptions(8, 8)).ptr(), LayerConformance({5, 7, 2}, {8, 8, 2}));
  EXPECT_EQ(keras_snake_case("CenterCrop"), "center_crop");
}

TEST(CenterCrop, MatchesKeras3TransformImages) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const CropCase& c : kCases) {
    SCOPED_TRACE(format_shape(c.in) + " to " + std::to_string(c.height) + "x" + std::to_string(c.width));
    auto [x, y] = torchfit::testing::random_forward(CenterCrop(CenterCropOptions(c.height, c.width)).ptr(), c.in);
    torchfit::testing::expect_matches_reference(
        y, torchfit::testing::keras_reference({{"op", "center_crop"},
                                               {"x", torchfit::testing::tensor_json(x)},
                                               {"height", c.height},
                                               {"width", c.width}}));
  }
}

TEST(CenterCrop, InputGradientMatchesTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const CropCase& c : {kCases[1], kCases[4]}) {
    SCOPED_TRACE(format_shape(c.in));
    torchfit::testing::expect_gradients_match_reference(
        CenterCrop(CenterCropOptions(c.height, c.width)).ptr(), c.in,
        {{"op", "center_crop"}, {"height", c.height}, {"width", c.width}});
  }
}

TEST(CenterCrop, Keras3ConfigReachesTheLayer) {
  const nlohmann::json crop = {{"module", "keras.layers"},
                               {"class_name", "CenterCrop"},
                               {"registered_name", nullptr},
                               {"config",
                                {{"name", "center_crop"},
                                 {"trainable", true},
                                 {"dtype", "float32"},
                                 {"height", 4},
                                 {"width", 6},
                                 {"data_format", "channels_last"}}}};
  const Model model = model_from_json(torchfit::testing::keras3_sequential_of({5, 7, 3}, crop));
  const auto layer = std::dynamic_pointer_cast<CenterCropImpl>(model->get_layer("center_crop"));
  ASSERT_TRUE(layer);
  EXPECT_EQ(model->output_shape(), (Shape{4, 6, 3}));
  EXPECT_EQ(layer_to_json(*layer_from_json(layer_to_json(*layer))), layer_to_json(*layer));
  EXPECT_EQ(layer->config(),
            (nlohmann::json{{"name", "center_crop"}, {"input_shape", {5, 7, 3}}, {"height", 4}, {"width", 6}}));
}

TEST(CenterCrop, BadArgumentsAndInputsNameTheLayer) {
  const auto message = torchfit::testing::config_error_of;
  std::string m = message([] { CenterCrop(CenterCropOptions(0, 3).name("c")); });
  EXPECT_NE(m.find("layer 'c' (CenterCrop): height and width must be > 0, got 0 and 3"), std::string::npos) << m;
  m = message([] {
    Sequential s;
    auto c = CenterCrop(CenterCropOptions(2, 3).name("c"));
    c->set_declared_input_shape(Shape{5, 2});
    s->add(c.ptr());
  });
  EXPECT_NE(m.find("layer 'c' (CenterCrop) expects a 3-D input (H, W, C), got (None, 5, 2)"), std::string::npos) << m;
  m = message([] { layer_from_json({{"class_name", "CenterCrop"}, {"config", {{"height", 2}}}}); });
  EXPECT_NE(m.find("(CenterCrop): missing field 'width'"), std::string::npos) << m;
}
