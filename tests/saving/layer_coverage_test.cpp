// Every built-in layer class (layers/registry.h's builtin_layer_classes) writes its own ONNX export and Keras
// weight layout, unless the class declares it has none (with the reason). One instance of each comes from
// the models of tests/support/onnx_models.h; their values are checked against independent references
// elsewhere (OpenCV DNN and ONNX's checker: onnx_export_test.cpp, onnx_export_test.sh; Keras files against
// NumPy: keras_import_test.cpp). Here: the export exists and set_keras_weights(keras_weights()) is exact.
#include <gtest/gtest.h>

#include <map>

#include <torchfit/io/onnx_graph.h>
#include <torchfit/layers/registry.h>
#include <torchfit/saving/onnx.h>

#include "support/onnx_models.h"

using namespace torchfit;

namespace {

// Model name → the model, weights random; class name → the models holding it.
struct Coverage {
  std::map<std::string, Model> models;
  std::map<std::string, std::vector<std::string>> classes;
};

Coverage build_coverage() {
  Coverage c;
  for (const auto& [name, build] : torchfit::testing::onnx_test_models()) {
    Model model = build();
    torchfit::testing::randomize_weights(model, 31);
    for (const auto& layer : model->layers()) c.classes[layer->class_name()].push_back(name);
    c.models.emplace(name, model);
  }
  return c;
}

at::Tensor sample_input(const Model& model) {
  at::manual_seed(32);
  Shape dims = to_tensor_shape(model->input_shape());
  dims.insert(dims.begin(), 2);
  return at::rand(dims);
}

}  // namespace

TEST(LayerCoverage, EveryBuiltinClassAppearsInTheTestModels) {
  const Coverage c = build_coverage();
  for (const auto& cls : builtin_layer_classes()) {
    EXPECT_TRUE(c.classes.count(cls)) << cls << " is in no model of tests/support/onnx_models.h: add it there";
  }
}

TEST(LayerCoverage, EveryBuiltinClassExportsToOnnxOrSaysWhyNot) {
  const Coverage c = build_coverage();
  for (const auto& [name, model] : c.models) {
    for (const auto& layer : model->layers()) {
      if (!layer->no_onnx_export_reason().empty()) continue;  // InputLayer: the graph's input
      io::OnnxGraph graph(17);
      std::vector<std::string> inputs;
      for (size_t i = 0; i < layer->input_shapes().size(); ++i) inputs.push_back(graph.unique_name("x"));
      EXPECT_FALSE(layer->export_onnx(graph, inputs).empty())
          << name << ": layer '" << layer->name() << "' (" << layer->class_name()
          << ") has no export_onnx and declares no no_onnx_export_reason()";
    }
    EXPECT_NO_THROW(saving::onnx_model_bytes(model)) << name;
  }
}

TEST(LayerCoverage, EveryBuiltinClassRoundTripsItsKerasWeights) {
  Coverage c = build_coverage();
  for (auto& [name, model] : c.models) {
    const at::Tensor x = sample_input(model);
    const at::Tensor expected = model->forward(x);
    std::vector<std::pair<std::shared_ptr<Layer>, std::vector<at::Tensor>>> saved;
    for (const auto& layer : model->layers()) {
      if (layer->count_params() > 0 && !layer->no_keras_weights_reason().empty()) continue;
      std::vector<at::Tensor> weights;
      ASSERT_NO_THROW(weights = layer->keras_weights()) << name << ": " << layer->name();
      int64_t numel = 0;
      for (const auto& w : weights) numel += w.numel();
      EXPECT_EQ(numel, layer->count_params()) << name << ": " << layer->name() << "'s Keras weights miss parameters";
      saved.emplace_back(layer, std::move(weights));
    }
    {
      torch::NoGradGuard no_grad;
      for (auto& p : model->parameters()) p.zero_();
    }
    for (auto& [layer, weights] : saved) {
      EXPECT_NO_THROW(layer->set_keras_weights(weights)) << name << ": " << layer->name();
    }
    EXPECT_TRUE(at::equal(model->forward(x), expected)) << name
                                                        << ": set_keras_weights(keras_weights()) changed "
                                                           "the outputs";
  }
}

// keras_weight_names() lines up with keras_weights() (one name per weight, each the parameter or buffer of that
// size), and an initializer named by each name's config key reaches that weight: a copy of the layer from its
// config plus "<key>_initializer": Constant(0.25), built for the same inputs, holds 0.25 in that weight only.
// (Exact 0.25 from a random default draw would be a one-in-2^24 event per value.)
TEST(LayerCoverage, EveryBuiltinClassNamesItsKerasWeightsAndTakesTheirInitializers) {
  const Coverage c = build_coverage();
  for (const auto& [name, model] : c.models) {
    for (const auto& layer : model->layers()) {
      if (layer->count_params() == 0 || !layer->no_keras_weights_reason().empty()) continue;
      const std::string who = name + ": " + layer->name() + " (" + layer->class_name() + ")";
      const auto names = layer->keras_weight_names();
      const auto weights = layer->keras_weights();
      ASSERT_EQ(names.size(), weights.size()) << who;
      for (size_t i = 0; i < names.size(); ++i) {
        nlohmann::json spec = layer_to_json(*layer);
        spec["config"][initializer_config_key(names[i])] = {{"class_name", "Constant"}, {"config", {{"value", 0.25}}}};
        auto copy = layer_from_json(spec);
        copy->build_multi(layer->input_shapes());
        const auto drawn = copy->keras_weights();
        for (size_t j = 0; j < drawn.size(); ++j) {
          if (!drawn[j].is_floating_point()) continue;  // Normalization's count (int64)
          // 0.25 appears in that weight only (LSTM's unit_forget_bias keeps its forget gate's ones).
          const bool drawn_here = (drawn[j] == 0.25).any().item<bool>();
          EXPECT_EQ(drawn_here, i == j) << who << ": " << initializer_config_key(names[i]) << " → Keras weight " << j
                                        << " (" << names[j] << ")";
        }
      }
    }
  }
}

TEST(LayerCoverage, AWrongKerasWeightCountIsRefusedNamingTheLayer) {
  Model model = torchfit::testing::residual_model();
  auto dense = model->layers().back();  // Dense: takes kernel and bias
  try {
    dense->set_keras_weights({at::zeros({1})});
    FAIL() << "one weight accepted for a Dense with a bias";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(Dense): got 1 Keras weights, the layer takes 2"), std::string::npos)
        << e.what();
  }
}

namespace {
// A user layer with a parameter and no Keras weight layout: y = w · x.
class WeightedImpl : public Layer {
 public:
  WeightedImpl() : Layer("Weighted", "weighted") {}
  at::Tensor forward(const at::Tensor& x) override { return x * w; }
  nlohmann::json config() const override { return base_config(); }
  at::Tensor w;

 protected:
  Shape build_impl(const Shape& in) override {
    w = register_parameter("w", at::ones({1}));
    return in;
  }
};
}  // namespace

TEST(LayerCoverage, AParameterLayerWithoutKerasLayoutIsRefusedNamingItsClass) {
  auto layer = std::make_shared<WeightedImpl>();
  EXPECT_THROW(layer->keras_weights(), ConfigError);  // not built
  layer->build({3});
  for (int set = 0; set < 2; ++set) {
    try {
      if (set) {
        layer->set_keras_weights({at::ones({1})});
      } else {
        layer->keras_weights();
      }
      FAIL() << "a layer without a Keras weight layout gave or took weights";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("layer 'weighted' (Weighted) has parameters but its class has no Keras "
                                           "weight layout"),
                std::string::npos)
          << e.what();
    }
  }
}
