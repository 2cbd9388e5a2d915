// Resizing (keras.layers.Resizing): bilinear and nearest, up and down, with crop_to_aspect_ratio and
// pad_to_aspect_ratio, against the float64 NumPy reference written from tf.image.resize and Keras 3's
// ops.image.resize (tests/layers/reference/keras_layers_reference.py); the input gradient against the
// reference's linear map; conformance, config, errors naming the layer.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/resizing.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

struct ResizeCase {
  int64_t height, width;
  std::string interpolation;
  bool crop = false, pad = false;
};

nlohmann::json request(const ResizeCase& c, const at::Tensor& x) {
  return {{"op", "resizing"},
          {"x", torchfit::testing::tensor_json(x)},
          {"height", c.height},
          {"width", c.width},
          {"interpolation", c.interpolation},
          {"crop", c.crop},
          {"pad", c.pad},
          {"fill_value", 0.5}};
}

Resizing make(const ResizeCase& c) {
  return Resizing(ResizingOptions(c.height, c.width)
                      .interpolation(c.interpolation)
                      .crop_to_aspect_ratio(c.crop)
                      .pad_to_aspect_ratio(c.pad)
                      .fill_value(0.5));
}

const std::vector<ResizeCase> kCases = {{9, 11, "bilinear"},
                                        {3, 4, "bilinear"},
                                        {9, 11, "nearest"},
                                        {3, 4, "nearest"},  // up, down (odd ratios)
                                        {4, 4, "bilinear", true},
                                        {6, 3, "nearest", true},
                                        {4, 4, "bilinear", false, true},  // aspect-ratio boxes
                                        {3, 8, "nearest", false, true}};

}  // namespace

TEST(Resizing, Conformance) {
  expect_layer_conformance(Resizing(ResizingOptions(4, 6)).ptr(), LayerConformance({5, 7, 2}, {4, 6, 2}));
  expect_layer_conformance(Resizing(ResizingOptions(3, 3).crop_to_aspect_ratio(true)).ptr(),
                           LayerConformance({5, 7, 2}, {3, 3, 2}));
}

TEST(Resizing, MatchesTensorFlowResize) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const ResizeCase& c : kCases) {
    SCOPED_TRACE(c.interpolation + " " + std::to_string(c.height) + "x" + std::to_string(c.width) +
                 (c.crop ? " crop" : "") + (c.pad ? " pad" : ""));
    auto [x, y] = torchfit::testing::random_forward(make(c).ptr(), {5, 7, 2});
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(request(c, x)));
  }
}

// Resizing is linear in its input: the gradient of Σ y·r at input k is the reference's output for the
// k-th basis image, summed against r.
TEST(Resizing, InputGradientIsTheReferencesLinearMapTransposed) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const ResizeCase& c : {kCases[0], kCases[3], kCases[4]}) {
    SCOPED_TRACE(c.interpolation + " " + std::to_string(c.height) + "x" + std::to_string(c.width));
    auto layer = make(c);
    layer->set_declared_input_shape(Shape{5, 7, 2});
    Sequential m;
    m->add(layer.ptr());
    const at::Tensor x = at::randn({1, 2, 5, 7}).requires_grad_(true);
    const at::Tensor r = at::randn({1, 2, c.height, c.width});
    (m->forward(x) * r).sum().backward();
    const at::Tensor basis = at::eye(70).reshape({70, 2, 5, 7});
    const at::Tensor want = (torchfit::testing::keras_reference(request(c, basis)) * r).sum({1, 2, 3});
    EXPECT_TRUE(at::allclose(x.grad().flatten(), want.to(at::kFloat), 1e-5, 1e-5)) << x.grad().flatten() << want;
  }
}

TEST(Resizing, ConfigRoundTripAndKerasDefaults) {
  auto layer = layer_from_json({{"class_name", "Resizing"},
                                {"config",
                                 {{"name", "resize"},
                                  {"height", 4},
                                  {"width", 6},
                                  {"interpolation", "nearest"},
                                  {"crop_to_aspect_ratio", true},
                                  {"pad_to_aspect_ratio", false},
                                  {"fill_mode", "constant"},
                                  {"fill_value", 0.0},
                                  {"antialias", false}}}});
  EXPECT_EQ(layer_to_json(*layer)["config"]["interpolation"], "nearest");
  EXPECT_EQ(layer_to_json(*layer_from_json(layer_to_json(*layer))), layer_to_json(*layer));
  const auto defaults =
      layer_to_json(*layer_from_json({{"class_name", "Resizing"}, {"config", {{"height", 2}, {"width", 3}}}}));
  EXPECT_EQ(defaults["config"]["interpolation"], "bilinear");
  EXPECT_EQ(defaults["config"]["crop_to_aspect_ratio"], false);
}

TEST(Resizing, BadArgumentsAndInputsNameTheLayer) {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto expect = [](const std::string& m, const std::string& part) {
    EXPECT_NE(m.find(part), std::string::npos) << m;
  };
  expect(message([] { Resizing(ResizingOptions(0, 3).name("r")); }),
         "layer 'r' (Resizing): height and width must be > 0");
  expect(message([] { Resizing(ResizingOptions(2, 3).name("r").interpolation("bicubic")); }),
         "interpolation must be 'bilinear' or 'nearest', got 'bicubic'");
  expect(message([] { Resizing(ResizingOptions(2, 3).crop_to_aspect_ratio(true).pad_to_aspect_ratio(true)); }),
         "cannot both be true");
  expect(message([] { Resizing(ResizingOptions(2, 3).fill_mode("reflect")); }), "fill_mode must be 'constant'");
  expect(message([] { Resizing(ResizingOptions(2, 3).antialias(true)); }), "antialias=true is not supported");
  expect(message([] {
           Sequential m;
           auto r = Resizing(ResizingOptions(2, 3).name("r"));
           r->set_declared_input_shape(Shape{5, 2});
           m->add(r.ptr());
         }),
         "layer 'r' (Resizing) expects a 3-D input (H, W, C), got (None, 5, 2)");
}

// Keras 3's get_config of Resizing (data_format and every argument) read by model_from_json: Keras's shapes.
TEST(Resizing, Keras3ConfigReachesTheLayer) {
  const nlohmann::json resizing = {{"module", "keras.layers"},
                                   {"class_name", "Resizing"},
                                   {"registered_name", nullptr},
                                   {"config",
                                    {{"name", "resizing"},
                                     {"trainable", true},
                                     {"dtype", "float32"},
                                     {"height", 4},
                                     {"width", 6},
                                     {"interpolation", "nearest"},
                                     {"crop_to_aspect_ratio", false},
                                     {"pad_to_aspect_ratio", true},
                                     {"fill_mode", "constant"},
                                     {"fill_value", 0.25},
                                     {"antialias", false},
                                     {"data_format", "channels_last"}}}};
  const Model model = model_from_json(torchfit::testing::keras3_sequential_of({5, 7, 3}, resizing));
  const auto layer = std::dynamic_pointer_cast<ResizingImpl>(model->get_layer("resizing"));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.interpolation(), "nearest");
  EXPECT_TRUE(layer->options.pad_to_aspect_ratio());
  EXPECT_DOUBLE_EQ(layer->options.fill_value(), 0.25);
  EXPECT_EQ(model->output_shape(), (Shape{4, 6, 3}));
}
