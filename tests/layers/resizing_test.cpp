// Resizing (keras.layers.Resizing): every tf.image.resize method (bilinear, nearest, bicubic, area, lanczos3,
// lanczos5, gaussian, mitchellcubic), antialias on and off, up and down, non-integer ratios, 1-pixel axes,
// with crop_to_aspect_ratio and pad_to_aspect_ratio, against the float64 NumPy references written from
// tf.image.resize, TensorFlow's kernels and Keras 3's ops.image.resize
// (tests/layers/reference/keras_layers_reference.py, tf_resize_reference.py); the input gradient against
// the reference's linear map; float64 and bfloat16 inputs; conformance, config, errors naming the layer.
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
  bool antialias = false;
};

nlohmann::json request(const ResizeCase& c, const at::Tensor& x) {
  return {{"op", "resizing"},
          {"x", torchfit::testing::tensor_json(x)},
          {"height", c.height},
          {"width", c.width},
          {"interpolation", c.interpolation},
          {"crop", c.crop},
          {"pad", c.pad},
          {"antialias", c.antialias},
          {"fill_value", 0.5}};
}

Resizing make(const ResizeCase& c) {
  return Resizing(ResizingOptions(c.height, c.width)
                      .interpolation(c.interpolation)
                      .crop_to_aspect_ratio(c.crop)
                      .pad_to_aspect_ratio(c.pad)
                      .antialias(c.antialias)
                      .fill_value(0.5));
}

std::string describe_case(const ResizeCase& c) {
  return c.interpolation + " " + std::to_string(c.height) + "x" + std::to_string(c.width) + (c.crop ? " crop" : "") +
         (c.pad ? " pad" : "") + (c.antialias ? " antialias" : "");
}

const std::vector<std::string> kWeightMethods = {"bicubic",  "area",     "lanczos3",
                                                 "lanczos5", "gaussian", "mitchellcubic"};

// For every method, antialias off and on, from a (5, 7) input: up (9, 11), down (3, 4), a non-integer
// ratio each way (4, 13) and (8, 2), 1-pixel outputs (1, 1); plus bilinear and nearest with antialias.
std::vector<ResizeCase> every_method_cases() {
  std::vector<ResizeCase> cases;
  for (const std::string& m : kWeightMethods) {
    for (bool aa : {false, true}) {
      for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{9, 11}, {3, 4}, {4, 13}, {8, 2}, {1, 1}}) {
        cases.push_back({h, w, m, false, false, aa});
      }
    }
  }
  for (const std::string& m : {std::string("bilinear"), std::string("nearest")}) {
    for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{9, 11}, {3, 4}, {2, 13}}) {
      cases.push_back({h, w, m, false, false, true});
    }
  }
  return cases;
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

TEST(Resizing, EveryMethodMatchesTensorFlowResize) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const ResizeCase& c : every_method_cases()) {
    SCOPED_TRACE(describe_case(c));
    auto [x, y] = torchfit::testing::random_forward(make(c).ptr(), {5, 7, 2});
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(request(c, x)));
  }
}

// 1-pixel input axes (a (1, 7) and a (5, 1) image), both up and down, and the aspect-ratio boxes with the
// weight-matrix methods.
TEST(Resizing, OnePixelAxesAndAspectRatioBoxesMatchTensorFlow) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const std::string& m : kWeightMethods) {
    for (bool aa : {false, true}) {
      for (const std::vector<int64_t>& in : {std::vector<int64_t>{1, 7, 2}, std::vector<int64_t>{5, 1, 2}}) {
        const ResizeCase c{3, 4, m, false, false, aa};
        SCOPED_TRACE(describe_case(c) + " from " + std::to_string(in[0]) + "x" + std::to_string(in[1]));
        auto [x, y] = torchfit::testing::random_forward(make(c).ptr(), in);
        torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(request(c, x)));
      }
      for (const ResizeCase& c : {ResizeCase{4, 4, m, true, false, aa}, ResizeCase{3, 8, m, false, true, aa}}) {
        SCOPED_TRACE(describe_case(c));
        auto [x, y] = torchfit::testing::random_forward(make(c).ptr(), {5, 7, 2});
        torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(request(c, x)));
      }
    }
  }
}

// A few fixed values from TensorFlow's definitions, by hand: ResizeArea of 4 → 3 is (1·a + ⅓·b)·¾, …
// (resize_area_op.cc's own comment); a constant image stays constant under every method (renormalised
// taps, area's coverages); antialias changes a bicubic downsampling but not an upsampling (tf.image.resize's
// docstring).
TEST(Resizing, HandValuesOfTheNewMethods) {
  const at::Tensor row = at::tensor({1.0, 2.0, 4.0, 8.0}, at::kDouble).reshape({1, 1, 1, 4});
  const at::Tensor area = Resizing(ResizingOptions(1, 3).interpolation("area"))->forward(row);
  EXPECT_TRUE(at::allclose(area.flatten(), at::tensor({1.25, 3.0, 7.0}, at::kDouble), 0, 1e-6)) << area;
  const at::Tensor flat = at::full({1, 2, 5, 7}, 3.5, at::kDouble);
  for (const std::string& m : kWeightMethods) {
    for (bool aa : {false, true}) {
      SCOPED_TRACE(m + (aa ? " antialias" : ""));
      for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{9, 11}, {2, 3}, {1, 1}}) {
        const at::Tensor y = Resizing(ResizingOptions(h, w).interpolation(m).antialias(aa))->forward(flat);
        // ResizeArea is not renormalised: its float32 box coverages sum to 1 within ~6e-7 (TensorFlow's too).
        EXPECT_TRUE(at::allclose(y, at::full_like(y, 3.5), 0, m == "area" ? 3.5e-6 : 1e-9)) << y;
      }
    }
  }
  const at::Tensor x = at::randn({1, 1, 8, 8}, at::kDouble);
  const auto bicubic = [&](int64_t size, bool aa) {
    return Resizing(ResizingOptions(size, size).interpolation("bicubic").antialias(aa))->forward(x);
  };
  EXPECT_GT((bicubic(3, false) - bicubic(3, true)).abs().max().item<double>(), 1e-3);
  EXPECT_LT((bicubic(16, false) - bicubic(16, true)).abs().max().item<double>(), 1e-9);  // same taps, same weights
}

// float64 stays float64 (and matches the float64 reference to 1e-12); bfloat16 on the CPU is resized in
// float32 and comes back as bfloat16; integers give float32 (tf.image.resize's).
TEST(Resizing, DtypesOfTheWeightMethods) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const ResizeCase c{4, 13, "lanczos3", false, false, true};
  auto layer = make(c);
  const at::Tensor x = at::randn({2, 2, 5, 7}, at::kDouble);
  const at::Tensor y = layer->forward(x);
  ASSERT_EQ(y.scalar_type(), at::kDouble);
  const at::Tensor want = torchfit::testing::keras_reference(request(c, x));
  EXPECT_LT((y - want).abs().max().item<double>(), 1e-12);
  const at::Tensor half = layer->forward(x.to(at::kBFloat16));
  EXPECT_EQ(half.scalar_type(), at::kBFloat16);
  EXPECT_LT((half.to(at::kDouble) - want).abs().max().item<double>(), 0.1);
  const at::Tensor ints = layer->forward((x.abs() * 50).to(at::kByte));
  EXPECT_EQ(ints.scalar_type(), at::kFloat);
}

// Resizing is linear in its input: the gradient of Σ y·r at input k is the reference's output for the
// k-th basis image, summed against r.
TEST(Resizing, InputGradientIsTheReferencesLinearMapTransposed) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const ResizeCase& c : {kCases[0], kCases[3], kCases[4], ResizeCase{3, 4, "bicubic"},
                              ResizeCase{4, 13, "area", true}, ResizeCase{3, 4, "lanczos5", false, false, true}}) {
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
  expect(message([] { Resizing(ResizingOptions(2, 3).name("r").interpolation("cubic")); }),
         "layer 'r' (Resizing): interpolation must be one of 'bilinear', 'nearest', 'bicubic', 'area', 'lanczos3', "
         "'lanczos5', 'gaussian', 'mitchellcubic', got 'cubic'");
  expect(message([] { Resizing(ResizingOptions(2, 3).crop_to_aspect_ratio(true).pad_to_aspect_ratio(true)); }),
         "cannot both be true");
  expect(message([] { Resizing(ResizingOptions(2, 3).fill_mode("reflect")); }), "fill_mode must be 'constant'");
  // TensorFlow ignores antialias for nearest and area (tf.image.resize), so it is no error there.
  EXPECT_EQ(message([] { Resizing(ResizingOptions(2, 3).interpolation("nearest").antialias(true)); }), "no error");
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
