// Normalization (keras.layers.Normalization, Keras 3): the given mean and variance (a number, a list, nested
// lists), adapt() of data and the adapted weights, any axis (the channels, (W, C) of an image, a sequence's
// steps, None), invert, against the float64 NumPy reference written from Keras 3's call and adapt
// (tests/layers/reference/keras_layers_reference.py); conformance, Keras weights, Keras 3 config, errors.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/normalization.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::config_error_of;
using torchfit::testing::tensor_json;
using Json = nlohmann::json;

TEST(Normalization, ConformanceAndKerasDefaults) {
  torchfit::testing::expect_layer_conformance(
      Normalization().ptr(), torchfit::testing::LayerConformance({4, 5, 3}, {4, 5, 3}).non_trainable_params(7));
  torchfit::testing::expect_layer_conformance(
      Normalization(NormalizationOptions().mean(Json::array({1.0, 2.0})).variance(4.0)).ptr(),
      torchfit::testing::LayerConformance({3, 2}, {3, 2}));
  EXPECT_EQ(Normalization()->options.axis().axes, std::vector<int64_t>{-1});
  EXPECT_FALSE(Normalization()->options.invert());
}

TEST(Normalization, AdaptAndCallMatchKeras3) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    Shape in;
    KerasAxes axis;
    bool invert;
  };
  for (const Case& c : {Case{{4, 5, 3}, KerasAxes(-1), false}, Case{{4, 5, 3}, KerasAxes({2, 3}), false},
                        Case{{6, 2}, KerasAxes(1), true}, Case{{5}, KerasAxes(std::vector<int64_t>{}), false},
                        Case{{3, 4, 2}, KerasAxes({1}), true}}) {
    SCOPED_TRACE(format_shape(c.in));
    Normalization layer(NormalizationOptions().axis(c.axis).invert(c.invert));
    layer->set_declared_input_shape(c.in);
    Sequential m;
    m->add(layer.ptr());
    m->eval();
    Shape batch = to_tensor_shape(c.in);
    batch.insert(batch.begin(), 7);
    at::manual_seed(2);
    const at::Tensor data = at::randn(batch) * 3 + 1, x = at::randn(batch);
    layer->adapt(data);
    std::vector<int64_t> axes = c.axis.axes;
    for (int64_t& a : axes) a = a < 0 ? a + static_cast<int64_t>(c.in.size()) + 1 : a;
    const at::Tensor want = torchfit::testing::keras_reference({{"op", "normalization"},
                                                                {"x", tensor_json(x)},
                                                                {"adapt", tensor_json(data)},
                                                                {"axis", axes},
                                                                {"invert", c.invert}});
    torchfit::testing::expect_matches_reference(m->forward(x), want, 1e-5);
  }
}

TEST(Normalization, GivenMeanAndVarianceBroadcastAsKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  // A nested list over (W, C) of a (2, 3, 2) image; a number; a list over the channels.
  const Json nested = {{0.5, -1.0}, {2.0, 0.0}, {1.0, 3.0}};
  const Json spread = {{1.0, 4.0}, {0.25, 9.0}, {2.0, 1e-20}};  // 1e-20: the 1e-7 floor of √variance
  auto [x, y] = torchfit::testing::random_forward(
      Normalization(NormalizationOptions().axis(KerasAxes({2, 3})).mean(nested).variance(spread)).ptr(), {2, 3, 2});
  torchfit::testing::expect_matches_reference(
      y,
      torchfit::testing::keras_reference(
          {{"op", "normalization"},
           {"x", tensor_json(x)},
           {"axis", {2, 3}},
           {"mean", tensor_json(at::tensor({0.5, -1.0, 2.0, 0.0, 1.0, 3.0}).reshape({3, 2}))},
           {"variance", tensor_json(at::tensor({1.0, 4.0, 0.25, 9.0, 2.0, 1e-20}).reshape({3, 2}))},
           {"invert", false}}),
      1e-3);  // the floored index divides by 1e-7
  auto [v, w] =
      torchfit::testing::random_forward(Normalization(NormalizationOptions().mean(3.0).variance(2.0)).ptr(), {4});
  EXPECT_TRUE(at::allclose(w, (v - 3.0) / std::sqrt(2.0), 1e-6, 1e-6));
}

TEST(Normalization, KerasWeightsAndKeras3Config) {
  Normalization layer;
  layer->set_declared_input_shape(Shape{2, 3});
  Sequential m;
  m->add(layer.ptr());
  layer->set_keras_weights({at::tensor({1.0F, 2.0F, 3.0F}), at::tensor({4.0F, 1.0F, 0.25F}), at::scalar_tensor(10)});
  const at::Tensor x = at::ones({1, 2, 3});
  EXPECT_TRUE(at::allclose(m->forward(x)[0][0], at::tensor({0.0F, -1.0F, -4.0F})));
  EXPECT_EQ(layer->keras_weights().size(), 3u);
  EXPECT_FALSE(layer->mean.requires_grad());
  const Json keras = {{"module", "keras.layers"},
                      {"class_name", "Normalization"},
                      {"registered_name", nullptr},
                      {"config",
                       {{"name", "normalization"},
                        {"trainable", true},
                        {"dtype", "float32"},
                        {"axis", {-1}},
                        {"invert", false},
                        {"mean", nullptr},
                        {"variance", nullptr}}}};
  const Model model = model_from_json(torchfit::testing::keras3_sequential_of({5, 7, 3}, keras));
  const auto n = std::dynamic_pointer_cast<NormalizationImpl>(model->get_layer("normalization"));
  ASSERT_TRUE(n);
  EXPECT_EQ(n->mean.sizes().vec(), (std::vector<int64_t>{3}));
  EXPECT_EQ(layer_to_json(*layer_from_json(layer_to_json(*n))), layer_to_json(*n));
}

TEST(Normalization, BadArgumentsAndInputsNameTheLayer) {
  std::string m = config_error_of([] { Normalization(NormalizationOptions().mean(1.0).name("n")); });
  EXPECT_NE(m.find("layer 'n' (Normalization): mean and variance must be given together"), std::string::npos) << m;
  m = config_error_of([] {
    Sequential s;
    auto n = Normalization(NormalizationOptions().mean(Json::array({1, 2})).variance(1.0).name("n"));
    n->set_declared_input_shape(Shape{4, 3});
    s->add(n.ptr());
  });
  EXPECT_NE(m.find("layer 'n' (Normalization): mean [1,2] does not broadcast to the kept axes' shape [3]"),
            std::string::npos)
      << m;
  m = config_error_of([] {
    Sequential s;
    auto n = Normalization(NormalizationOptions().axis(KerasAxes(0)).name("n"));
    n->set_declared_input_shape(Shape{4});
    s->add(n.ptr());
  });
  EXPECT_NE(m.find("layer 'n' (Normalization): axis"), std::string::npos) << m;
  m = config_error_of([] {
    Normalization n;
    n->set_declared_input_shape(Shape{4});
    Sequential s;
    s->add(n.ptr());
    n->adapt(at::ones({2, 5}));
  });
  EXPECT_NE(m.find("adapt() data of shape [2, 5] is not a batch of the built input (None, 4)"), std::string::npos) << m;
  m = config_error_of([] { Normalization(NormalizationOptions().mean(Json::array({"a"})).variance(1.0))->build({2}); });
  EXPECT_NE(m.find("mean must be a number or a list of numbers"), std::string::npos) << m;
}
