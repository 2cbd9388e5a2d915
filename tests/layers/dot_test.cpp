// Dot (keras.layers.Dot): values against the NumPy reference written from Keras 3's Dot and batch_dot
// (vectors, sequences, mixed ranks, negative and paired axes, normalize), gradients, config round trip,
// a Keras 3 functional config, bad input.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/registry.h>

#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;

namespace {

at::Tensor batch(const Shape& keras_shape) {
  std::vector<int64_t> shape = keras_shape;
  shape.insert(shape.begin(), 3);
  return at::randn(shape);
}

}  // namespace

TEST(Dot, MatchesKerasBatchDot) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    Shape a, b;
    KerasAxes axes;
    bool normalize;
    Shape out;
  };
  const std::vector<Case> cases = {
      {{5}, {5}, KerasAxes(1), false, {1}},                // vectors → (1)
      {{5}, {5}, KerasAxes(-1), true, {1}},                // cosine similarity
      {{4, 3}, {6, 3}, KerasAxes(2), false, {4, 6}},       // sequences over the features
      {{4, 3}, {6, 3}, KerasAxes({-1, 2}), true, {4, 6}},  // normalized
      {{4, 3}, {4, 5}, KerasAxes({1, 1}), false, {3, 5}},  // over the steps
      {{4, 3}, {5, 4}, KerasAxes({1, 2}), true, {3, 5}},   // one transposed each way
      {{4, 3}, {3}, KerasAxes({2, 1}), false, {4}},        // sequence · vector
      {{3}, {4, 3}, KerasAxes({1, 2}), false, {4}},        // vector · sequence
  };
  at::manual_seed(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(format_shapes({c.a, c.b}) + " axes " + Json(c.axes).dump());
    Dot dot(DotOptions(c.axes).normalize(c.normalize));
    EXPECT_EQ(dot->build_multi({c.a, c.b}), c.out);
    const at::Tensor x = batch(c.a), y = batch(c.b);
    const at::Tensor got = dot->forward_multi({x, y});
    const Json req = {{"op", "dot"},
                      {"x", torchfit::testing::tensor_json(x)},
                      {"other", torchfit::testing::tensor_json(y)},
                      {"axes", c.axes},
                      {"normalize", c.normalize}};
    torchfit::testing::expect_matches_reference(got, torchfit::testing::keras_reference(req));
  }
}

TEST(Dot, GradientsReachBothInputsAndZeroVectorsStayFinite) {
  Dot dot(DotOptions(KerasAxes(2)).normalize(true));
  dot->build_multi({{4, 3}, {5, 3}});
  const at::Tensor a = at::randn({2, 4, 3}).requires_grad_(), b = at::randn({2, 5, 3}).requires_grad_();
  dot->forward_multi({a, b}).sum().backward();
  EXPECT_GT(a.grad().abs().sum().item<double>(), 0.0);
  EXPECT_GT(b.grad().abs().sum().item<double>(), 0.0);
  // Keras's floor on the norm: a zero vector gives 0, not nan.
  const at::Tensor zero = dot->forward_multi({at::zeros({1, 4, 3}), at::ones({1, 5, 3})});
  EXPECT_TRUE(at::equal(zero, at::zeros({1, 4, 5}))) << zero;
}

// Keras 3's get_config ("axes" an int or a list as given, "normalize") through model_from_json in a Keras 3
// functional graph; torchfit's config round-trips both forms.
TEST(Dot, Keras3ConfigAndRoundTrip) {
  const Json dtype = {{"module", "keras"}, {"class_name", "DTypePolicy"}, {"config", {{"name", "float32"}}}};
  auto tensor = [](const std::string& n) {
    return Json{{"class_name", "__keras_tensor__"},
                {"config", {{"shape", nullptr}, {"dtype", "float32"}, {"keras_history", {n, 0, 0}}}}};
  };
  auto layer = [&](const std::string& cls, const std::string& name, Json c, Json args) {
    c["name"] = name;
    c["dtype"] = dtype;
    c["trainable"] = true;
    return Json{{"module", "keras.layers"},
                {"class_name", cls},
                {"config", c},
                {"registered_name", nullptr},
                {"name", name},
                {"inbound_nodes", {{{"args", args}, {"kwargs", Json::object()}}}}};
  };
  Json layers = Json::array();
  layers.push_back({{"module", "keras.layers"},
                    {"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, 4, 6}}, {"dtype", "float32"}, {"name", "seq"}}},
                    {"name", "seq"},
                    {"inbound_nodes", Json::array()}});
  layers.push_back(layer("Dense", "a", {{"units", 3}, {"activation", "linear"}, {"use_bias", true}}, {tensor("seq")}));
  layers.push_back(layer("Dense", "b", {{"units", 3}, {"activation", "tanh"}, {"use_bias", true}}, {tensor("seq")}));
  layers.push_back(layer("Dot", "dot", {{"axes", {2, 2}}, {"normalize", true}}, {{tensor("a"), tensor("b")}}));
  const Json keras = {
      {"module", "keras.src.models.functional"},
      {"class_name", "Functional"},
      {"config",
       {{"name", "m"}, {"layers", layers}, {"input_layers", {{"seq", 0, 0}}}, {"output_layers", {{"dot", 0, 0}}}}}};
  const Model m = model_from_json(keras);
  EXPECT_EQ(m->output_shape(), (Shape{4, 4}));
  const auto dot = std::dynamic_pointer_cast<DotImpl>(m->get_layer("dot"));
  ASSERT_TRUE(dot);
  EXPECT_TRUE(dot->options.normalize());
  const Json written = layer_to_json(*dot);
  EXPECT_EQ(written["config"]["axes"], Json::array({2, 2}));
  EXPECT_EQ(layer_to_json(*layer_from_json(written)), written);
  const Json single = layer_to_json(*Dot(DotOptions(KerasAxes(-1)).name("d")));
  EXPECT_EQ(single["config"], (Json{{"name", "d"}, {"axes", -1}, {"normalize", false}}));
  EXPECT_EQ(layer_to_json(*layer_from_json(single)), single);
}

TEST(Dot, BadInputNamesTheLayer) {
  using torchfit::testing::layer_config_error;
  auto spec = [](Json axes) { return Json{{"class_name", "Dot"}, {"config", {{"name", "d"}, {"axes", axes}}}}; };
  EXPECT_NE(layer_config_error(spec({1, 2, 3})).find("layer 'd' (Dot): axes must be an integer or a list of two"),
            std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "Dot"}, {"config", {{"name", "d"}}}}).find("missing field 'axes'"),
            std::string::npos);
  auto build_error = [](KerasAxes axes, std::vector<Shape> shapes) {
    try {
      Dot(DotOptions(axes).name("d"))->build_multi(shapes);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(build_error(KerasAxes(2), {{4, 3}, {5, 4}}).find("layer 'd' (Dot): the dot axes"), std::string::npos);
  EXPECT_NE(build_error(KerasAxes(0), {{4, 3}, {5, 3}}).find("layer 'd' (Dot)"), std::string::npos);
  EXPECT_NE(build_error(KerasAxes(3), {{4, 3}, {5, 3}}).find("layer 'd' (Dot)"), std::string::npos);
  EXPECT_NE(build_error(KerasAxes(3), {{4, 3, 2}, {5, 3, 2}}).find("are not supported"), std::string::npos);
  EXPECT_NE(build_error(KerasAxes(1), {{4}, {4}, {4}}).find("exactly 2 inputs"), std::string::npos);
}
