// Embedding: the lookup and its gradient against NumPy indexing (Keras order, every rank), conformance,
// the uniform(-0.05, 0.05) table, out-of-range indices and bad arguments refused naming the layer.
#include <gtest/gtest.h>

#include <torchfit/layers/embedding.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

// A built Embedding(7, 3) for the per-sample shape `in`, with a random table.
Embedding built_embedding(const Shape& in, int64_t input_dim = 7) {
  Embedding layer(EmbeddingOptions(input_dim, 3).input_shape(in));
  Sequential m;
  m->add(layer);
  at::manual_seed(2);
  layer->embeddings.data().copy_(at::randn({input_dim, 3}));
  return layer;
}

}  // namespace

// keras.layers.Embedding.call: ops.take(embeddings, ops.cast(inputs, "int32"), axis=0), for a sequence (L),
// an (H, W) input (an image out) and an image (H, W, C) (a rank-4 output); the table's gradient is the
// scatter-add of the output's (NumPy's add.at).
TEST(Embedding, MatchesNumpyIndexingAndItsGradient) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  for (const Shape& in : {Shape{5}, Shape{2, 3}, Shape{2, 3, 2}}) {
    SCOPED_TRACE(format_shape(in));
    Embedding layer = built_embedding(in);
    Shape x_shape = to_tensor_shape(in);
    x_shape.insert(x_shape.begin(), 3);
    at::manual_seed(4);
    const at::Tensor x = at::randint(7, x_shape).to(at::kFloat) + 0.75;  // truncated toward zero, as Keras
    const at::Tensor y = layer->forward(x);
    const at::Tensor grad_y = at::randn_like(y);
    (y * grad_y).sum().backward();
    const auto json = [](const at::Tensor& t) { return torchfit::testing::tensor_json(t); };
    const nlohmann::json req = {{"op", "embedding"}, {"x", json(x)}, {"embeddings", json(layer->embeddings)}};
    torchfit::testing::expect_matches_reference(y, torchfit::testing::keras_reference(req));
    nlohmann::json grad_req = req;
    grad_req["op"] = "embedding_grad";
    grad_req["grad_y"] = json(grad_y);
    torchfit::testing::expect_matches_reference(layer->embeddings.grad(), torchfit::testing::keras_reference(grad_req));
    EXPECT_EQ(layer->forward(x.to(at::kLong)).sizes(), y.sizes()) << "integer indices";
  }
}

TEST(Embedding, Conforms) {
  expect_layer_conformance(Embedding(EmbeddingOptions(7, 3)).ptr(),
                           LayerConformance({5}, {5, 3}).trainable_params(21).index_input(7));
  expect_layer_conformance(Embedding(EmbeddingOptions(4, 2)).ptr(),
                           LayerConformance({2, 3}, {2, 3, 2}).trainable_params(8).index_input(4));
  expect_layer_conformance(Embedding(EmbeddingOptions(4, 2)).ptr(),
                           LayerConformance({2, 3, 2}, {2, 3, 2, 2}).trainable_params(8).index_input(4));
}

TEST(Embedding, TableIsKerasUniform) {
  at::manual_seed(1);
  Embedding layer(EmbeddingOptions(100, 50).input_shape(Shape{4}));
  Sequential m;
  m->add(layer);
  EXPECT_LE(layer->embeddings.abs().max().item<double>(), 0.05);
  EXPECT_GT(layer->embeddings.abs().max().item<double>(), 0.049);
  EXPECT_EQ(layer->keras_weights()[0].sizes(), (std::vector<int64_t>{100, 50}));
}

TEST(Embedding, AnIndexOutsideTheVocabularyIsAnErrorNamingItAndTheLayer) {
  Embedding layer = built_embedding({3});
  for (double bad : {7.0, -1.0, 12.5}) {
    try {
      layer->forward(at::tensor({0.0, bad, 1.0}).view({1, 3}));
      FAIL() << bad << " accepted";
    } catch (const IndexError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("(Embedding)"), std::string::npos) << msg;
      EXPECT_NE(msg.find("index " + std::to_string(static_cast<int64_t>(bad))), std::string::npos) << msg;
    }
  }
}

TEST(Embedding, BadArgumentsAreRefusedNamingTheLayer) {
  const auto refused = [](const nlohmann::json& config, const std::string& what) {
    try {
      layer_from_json({{"class_name", "Embedding"}, {"config", config}});
      ADD_FAILURE() << config.dump() << " accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("(Embedding)"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  refused({{"input_dim", 0}, {"output_dim", 3}}, "input_dim");
  refused({{"input_dim", 5}, {"output_dim", -1}}, "output_dim");
  Sequential m;
  EXPECT_THROW(m->add(Embedding(EmbeddingOptions(5, 3).input_length(4).input_shape(Shape{6}))), ConfigError);
  Sequential ok;
  ok->add(Embedding(EmbeddingOptions(5, 3).input_length(6).input_shape(Shape{6})));
  EXPECT_EQ(ok->output_shape(), (Shape{6, 3}));
}
