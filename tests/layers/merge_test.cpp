// Merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate): values against NumPy
// (scripts/merge_reference.py → tests/data/golden/merge_reference.json), shapes, errors, configs.
#include <gtest/gtest.h>

#include <fstream>

#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/model.h>

using namespace torchfit;

namespace {

nlohmann::json merge_reference() {
  std::ifstream f(std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/golden/merge_reference.json");
  EXPECT_TRUE(f) << "missing merge_reference.json (regenerate: /usr/bin/python3 scripts/merge_reference.py)";
  return nlohmann::json::parse(f);
}

// A channels-last (N, H, W, C) NumPy array → the NCHW tensor torchfit layers take.
at::Tensor nchw(const nlohmann::json& array) {
  const std::vector<int64_t> shape = array.at("shape");
  const std::vector<float> values = array.at("values");
  return at::tensor(values).reshape(shape).permute({0, 3, 1, 2}).contiguous();
}

std::shared_ptr<Layer> make_merge(const nlohmann::json& c) {
  nlohmann::json config = {{"name", "m"}};
  if (c.contains("axis")) config["axis"] = c["axis"];
  return layer_from_json({{"class_name", c.at("layer")}, {"config", config}});
}

Shape keras_shape(const at::Tensor& t) { return to_keras_shape(Shape(t.sizes().begin() + 1, t.sizes().end())); }

}  // namespace

TEST(Merge, ValuesMatchNumPy) {
  const auto ref = merge_reference();
  int compared = 0;
  for (const auto& c : ref.at("cases")) {
    auto layer = make_merge(c);
    std::vector<at::Tensor> xs;
    std::vector<Shape> shapes;
    for (const auto& name : c.at("inputs")) {
      xs.push_back(nchw(ref.at("inputs").at(name.get<std::string>())));
      shapes.push_back(keras_shape(xs.back()));
    }
    const at::Tensor expected = nchw(c.at("expected"));
    EXPECT_EQ(layer->build_multi(shapes), keras_shape(expected)) << c.at("layer");
    const at::Tensor y = layer->forward_multi(xs);
    ASSERT_EQ(y.sizes(), expected.sizes()) << c.at("layer");
    EXPECT_TRUE(at::allclose(y, expected, 1e-6, 1e-6))
        << c.at("layer") << " max diff " << (y - expected).abs().max().item<float>();
    // channels_last tensors give the same values
    std::vector<at::Tensor> cl;
    for (const auto& x : xs) cl.push_back(x.contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(at::allclose(layer->forward_multi(cl), expected, 1e-6, 1e-6)) << c.at("layer");
    ++compared;
  }
  EXPECT_EQ(compared, 11);
}

TEST(Merge, ConcatenateMapsKerasAxesToNchw) {
  for (auto [axis, dim] : std::vector<std::pair<int64_t, int64_t>>{{-1, 1}, {3, 1}, {1, 2}, {2, 3}, {-3, 2}}) {
    Concatenate c(ConcatenateOptions().axis(axis));
    c->build_multi({{4, 5, 2}, {4, 5, 2}});
    EXPECT_EQ(c->tensor_dim(), dim) << axis;
  }
  Concatenate flat;
  EXPECT_EQ(flat->build_multi({{3}, {5}}), (Shape{8}));
  EXPECT_EQ(flat->tensor_dim(), 1);
}

TEST(Merge, ErrorsNameTheLayerAndTheShapes) {
  auto msg = [](auto&& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg([] {
              Add(MergeOptions().name("a"))->build_multi({{4, 4, 3}, {4, 4, 2}});
            }).find("layer 'a' (Add): inputs with shapes (None, 4, 4, 3), (None, 4, 4, 2) cannot be merged"),
            std::string::npos);
  EXPECT_NE(msg([] {
              Subtract(MergeOptions().name("s"))->build_multi({{3}, {3}, {3}});
            }).find("layer 's' (Subtract) takes a list of exactly 2 inputs, got 3"),
            std::string::npos);
  EXPECT_NE(msg([] { Add(MergeOptions().name("a"))->build_multi({{3}}); }).find("at least 2 inputs, got 1"),
            std::string::npos);
  EXPECT_NE(msg([] {
              Concatenate(ConcatenateOptions().name("c"))->build_multi({{4, 4, 3}, {5, 4, 2}});
            }).find("cannot be concatenated on axis -1"),
            std::string::npos);
  EXPECT_NE(msg([] {
              Concatenate(ConcatenateOptions().axis(4).name("c"))->build_multi({{4, 4, 3}, {4, 4, 2}});
            }).find("axis 4 is out of range"),
            std::string::npos);
  EXPECT_THROW(Concatenate(ConcatenateOptions().axis(0)), ConfigError);
  EXPECT_NE(msg([] { Add(MergeOptions().name("a"))->build(Shape{3}); }).find("takes a list of inputs"),
            std::string::npos);
}

TEST(Merge, ConfigRoundTripAndRegistration) {
  const auto known = registered_layers();
  for (const char* cls :
       {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "InputLayer"}) {
    EXPECT_NE(std::find(known.begin(), known.end(), cls), known.end()) << cls;
  }
  Concatenate c(ConcatenateOptions().axis(2).name("cat"));
  const auto spec = layer_to_json(*c);
  EXPECT_EQ(spec.at("config"), (nlohmann::json{{"name", "cat"}, {"axis", 2}}));
  auto back = layer_from_json(spec);
  EXPECT_EQ(back->class_name(), "Concatenate");
  EXPECT_EQ(back->config(), c->config());
  EXPECT_THROW(layer_from_json({{"class_name", "Add"}, {"config", {{"name", "a"}, {"axis", 1}}}}), ConfigError);
  auto frozen = layer_from_json({{"class_name", "Add"}, {"config", {{"name", "a"}, {"trainable", false}}}});
  EXPECT_FALSE(frozen->trainable());
  EXPECT_EQ(frozen->config().at("trainable"), false);
}

TEST(Merge, GradientsReachEveryInput) {
  auto a = at::randn({2, 3, 4, 4}).requires_grad_();
  auto b = at::randn({2, 3, 4, 4}).requires_grad_();
  for (const char* cls : {"Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate"}) {
    auto layer = layer_from_json({{"class_name", cls}, {"config", {{"name", "m"}}}});
    layer->build_multi({{4, 4, 3}, {4, 4, 3}});
    a.mutable_grad().reset();
    b.mutable_grad().reset();
    layer->forward_multi({a, b}).sum().backward();
    ASSERT_TRUE(a.grad().defined() && b.grad().defined()) << cls;
    EXPECT_GT(a.grad().abs().sum().item<float>() + b.grad().abs().sum().item<float>(), 0.0f) << cls;
  }
}
