// Keras files and JSON of the attention layers: tf.keras 2 .h5 and Keras 3 .keras files written with h5py in
// Keras's layouts (tests/keras/keras_attention_fixtures.py: MultiHeadAttention as self-attention mha(x, x,
// use_causal_mask=True) and cross attention with a key; Attention and AdditiveAttention on lists) predict the
// NumPy reference written from Keras 3's source; written back, the calls keep Keras's forms (Keras 3's
// args/kwargs and shapes_dict, tf.keras 2's kwargs "value"), the weights Keras's layouts, and the files read
// back to the same predictions; calls torchfit's graph cannot carry are refused naming the layer. A Keras 3
// .keras file with GroupQueryAttention (grouped self-attention, causal; multi-query cross attention with a key)
// predicts the NumPy reference and is written back in Keras 3's layout (weights under
// layers/grouped_query_attention/_query_dense/vars, …).
#include <gtest/gtest.h>

#include <fstream>

#include <torch/torch.h>

#include <torchfit/keras/keras_file.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/layers/group_query_attention.h>
#include <torchfit/layers/multi_head_attention.h>
#include <torchfit/layers/registry.h>

#include "support/keras_fixture_suite.h"
#include "support/temp_dir.h"

namespace torchfit {
namespace keras_attention_test {

using Json = nlohmann::json;
using testing::npy_tensor;

class KerasAttention : public testing::KerasFixtureSuite<KerasAttention> {
 public:
  static constexpr const char* kScript = "tests/keras/keras_attention_fixtures.py";
  static constexpr const char* kTag = "keras_attention";

 protected:
  static at::Tensor input(const std::string& stem) { return npy_tensor(file(stem + ".input.npy")); }
  // The model file `stem` + `ext` gives the reference probabilities within 1e-5; the model.
  static Model expect_outputs(const std::string& stem, const std::string& ext) {
    SCOPED_TRACE(stem + ext);
    Model model = keras::load_keras_model(file(stem + ext));
    torch::NoGradGuard no_grad;
    const at::Tensor got = model->forward(input(stem));
    const at::Tensor want = npy_tensor(file(stem + ".expected.npy"));
    EXPECT_EQ(got.sizes(), want.sizes());
    if (got.sizes() == want.sizes()) EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
    return model;
  }
};

TEST_F(KerasAttention, MultiHeadAttentionModelMatchesNumpyFromBothFormats) {
  Model h5 = expect_outputs("mha", ".h5");
  Model k3 = expect_outputs("mha", ".keras");
  const auto mha = std::dynamic_pointer_cast<MultiHeadAttentionImpl>(k3->get_layer("mha"));
  ASSERT_TRUE(mha);
  EXPECT_TRUE(mha->options.use_causal_mask());  // from the call's kwargs
  EXPECT_EQ(mha->input_shapes().size(), 2u);    // mha(x, value=x)
  EXPECT_EQ(k3->get_layer("mha2")->input_shapes().size(), 3u);
}

TEST_F(KerasAttention, AttentionAndAdditiveAttentionModelMatchesNumpyFromBothFormats) {
  expect_outputs("dense_attention", ".h5");
  expect_outputs("dense_attention", ".keras");
}

// Written back: Keras 3's call {"args": [query], "kwargs": {"value", "key", "use_causal_mask"}} and its
// build_config shapes_dict, tf.keras 2's [[query, 0, 0, {"value": [...], …}]], the flag out of the configs,
// the weights in the sublayers' groups (Keras 3) and under <layer>/query/kernel:0 (tf.keras 2); both files
// read back to the same predictions.
TEST_F(KerasAttention, WrittenFilesKeepKerasCallFormsAndReadBack) {
  Model model = keras::load_keras_model(file("mha.keras"));
  const Json k3 = keras::keras3_model_config(*model);
  Json mha, mha2, att;
  for (const auto& l : k3["config"]["layers"]) {
    if (l["name"] == "mha") mha = l;
    if (l["name"] == "mha2") mha2 = l;
  }
  const Json node = mha["inbound_nodes"][0];
  EXPECT_EQ(node["args"].size(), 1u);
  EXPECT_EQ(node["args"][0]["config"]["keras_history"], Json::array({"x", 0, 0}));
  EXPECT_EQ(node["kwargs"]["value"]["config"]["keras_history"], Json::array({"x", 0, 0}));
  EXPECT_EQ(node["kwargs"]["use_causal_mask"], true);
  EXPECT_FALSE(mha["config"].contains("use_causal_mask"));
  EXPECT_EQ(mha["build_config"]["shapes_dict"],
            (Json{{"query_shape", {nullptr, 5, 4}}, {"value_shape", {nullptr, 5, 4}}}));
  EXPECT_EQ(mha2["inbound_nodes"][0]["kwargs"]["key"]["config"]["keras_history"], Json::array({"k", 0, 0}));
  EXPECT_FALSE(mha2["inbound_nodes"][0]["kwargs"].contains("use_causal_mask"));
  EXPECT_EQ(mha["config"]["kernel_initializer"]["class_name"], "GlorotUniform");
  const Json k2 = keras::keras2_model_config(*model);
  for (const auto& l : k2["config"]["layers"]) {
    if (l["name"] == "mha") {
      EXPECT_EQ(l["inbound_nodes"], Json::parse(R"([[["x", 0, 0, {"value": ["x", 0, 0], "use_causal_mask": true}]]])"));
      EXPECT_FALSE(l["config"].contains("use_causal_mask"));
    }
  }
  testing::TempDir dir("keras_attention");
  keras::save_keras_model(*model, dir.file("back.keras"));
  keras::save_keras_h5(*model, dir.file("back.h5"));
  const keras::KerasFile back3 = keras::read_keras_file(dir.file("back.keras"));
  const keras::KerasFile back2 = keras::read_keras_file(dir.file("back.h5"));
  for (const auto& w : back3.weights) {
    if (w.layer == "mha") EXPECT_EQ(w.names.front(), "query_dense/vars/0");
    if (w.layer == "mha") EXPECT_EQ(w.names.back(), "output_dense/vars/1");
  }
  for (const auto& w : back2.weights) {
    if (w.layer == "mha") EXPECT_EQ(w.names.front(), "mha/query/kernel:0");
  }
  torch::NoGradGuard no_grad;
  const at::Tensor want = model->forward(input("mha"));
  for (const std::string f : {"back.keras", "back.h5"}) {
    Model again = keras::load_keras_model(dir.file(f));
    EXPECT_TRUE(at::equal(again->forward(input("mha")), want)) << f;
  }
  Model dense = keras::load_keras_model(file("dense_attention.keras"));
  const Json dense_config = keras::keras3_model_config(*dense);
  for (const auto& l : dense_config["config"]["layers"]) {
    if (l["name"] == "att1") att = l;
  }
  EXPECT_EQ(att["inbound_nodes"][0]["args"][0].size(), 2u);  // Attention([x, x], use_causal_mask=True)
  EXPECT_EQ(att["inbound_nodes"][0]["kwargs"], (Json{{"use_causal_mask", true}}));
}

// Keras 3's config.json and model.weights.h5 of GroupQueryAttention: read (the h5 keys from its Python class
// GroupedQueryAttention, the variables in its private sublayers), predicted as the reference; written back as
// Keras writes it (class "GroupQueryAttention", the call's kwargs and shapes_dict, the same h5 keys) and read
// back to the same predictions.
TEST_F(KerasAttention, GroupQueryAttentionKeras3FileMatchesNumpyAndWritesKerasLayout) {
  Model model = expect_outputs("gqa", ".keras");
  const auto gqa = std::dynamic_pointer_cast<GroupQueryAttentionImpl>(model->get_layer("gqa"));
  ASSERT_TRUE(gqa);
  EXPECT_TRUE(gqa->options.use_causal_mask());  // from the call's kwargs
  EXPECT_EQ(gqa->options.num_key_value_heads(), 2);
  EXPECT_EQ(gqa->input_shapes().size(), 2u);
  EXPECT_EQ(model->get_layer("gqa2")->input_shapes().size(), 3u);
  const keras::KerasFile read = keras::read_keras_file(file("gqa.keras"));
  for (const auto& w : read.weights) {
    if (w.layer == "gqa") EXPECT_EQ(w.names.front(), "_query_dense/vars/0");
    if (w.layer == "gqa") EXPECT_EQ(w.names.back(), "_output_dense/vars/1");
  }
  const Json k3 = keras::keras3_model_config(*model);
  Json entry;
  for (const auto& l : k3["config"]["layers"]) {
    if (l["name"] == "gqa") entry = l;
  }
  EXPECT_EQ(entry["class_name"], "GroupQueryAttention");
  EXPECT_EQ(entry["module"], "keras.layers");
  EXPECT_EQ(entry["config"]["head_dim"], 3);
  EXPECT_EQ(entry["config"]["num_query_heads"], 4);
  EXPECT_FALSE(entry["config"].contains("use_causal_mask"));
  EXPECT_EQ(entry["inbound_nodes"][0]["kwargs"]["use_causal_mask"], true);
  EXPECT_EQ(entry["build_config"]["shapes_dict"],
            (Json{{"query_shape", {nullptr, 5, 4}}, {"value_shape", {nullptr, 5, 4}}}));
  testing::TempDir dir("keras_gqa");
  keras::save_keras_model(*model, dir.file("back.keras"));
  const keras::KerasFile back = keras::read_keras_file(dir.file("back.keras"));
  bool found = false;
  for (const auto& w : back.weights) {
    if (w.layer != "gqa2") continue;
    found = true;
    EXPECT_EQ(w.names, (std::vector<std::string>{"_query_dense/vars/0", "_key_dense/vars/0", "_value_dense/vars/0",
                                                 "_output_dense/vars/0"}));
  }
  EXPECT_TRUE(found);
  torch::NoGradGuard no_grad;
  const at::Tensor want = model->forward(input("gqa"));
  EXPECT_TRUE(at::equal(keras::load_keras_model(dir.file("back.keras"))->forward(input("gqa")), want));
}

namespace {

Json tensor(const std::string& n) {
  return {{"class_name", "__keras_tensor__"},
          {"config", {{"shape", nullptr}, {"dtype", "float32"}, {"keras_history", {n, 0, 0}}}}};
}

// A Keras 3 functional model: input x (5, 4) → `cls` called with `args`, `kwargs` (one node per entry).
Json keras3_model(const std::string& cls, Json config, const std::vector<std::pair<Json, Json>>& calls) {
  config["name"] = "att";
  Json nodes = Json::array();
  for (const auto& [args, kwargs] : calls) nodes.push_back({{"args", args}, {"kwargs", kwargs}});
  Json layers = Json::array({{{"class_name", "InputLayer"},
                              {"config", {{"batch_shape", {nullptr, 5, 4}}, {"dtype", "float32"}, {"name", "x"}}},
                              {"name", "x"},
                              {"inbound_nodes", Json::array()}},
                             {{"class_name", cls}, {"config", config}, {"name", "att"}, {"inbound_nodes", nodes}}});
  return {{"class_name", "Functional"},
          {"config",
           {{"name", "m"}, {"layers", layers}, {"input_layers", {{"x", 0, 0}}}, {"output_layers", {{"att", 0, 0}}}}}};
}

std::string json_error(const Json& model) {
  try {
    model_from_json(model);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

const Json kMha = {{"num_heads", 2}, {"key_dim", 3}};

}  // namespace

// tf.keras 2's forms: kwargs {"value": [x, 0, 0]} and the older positional list [[x, 0, 0, {}], [x, 0, 0, {}]];
// Keras 3 called with keywords only (mha(query=x, value=x)); tf.keras 2.0–2.9's Attention(causal=True).
TEST(KerasAttentionJson, ReadsEveryCallFormOfKerasAndTfKeras2) {
  Json tf2 = keras3_model("MultiHeadAttention", kMha, {});
  tf2["config"]["layers"][1]["inbound_nodes"] = Json::parse(R"([[["x", 0, 0, {"value": ["x", 0, 0]}]]])");
  EXPECT_EQ(model_from_json(tf2)->get_layer("att")->input_shapes().size(), 2u);
  tf2["config"]["layers"][1]["inbound_nodes"] = Json::parse(R"([[["x", 0, 0, {}], ["x", 0, 0, {}], ["x", 0, 0, {}]]])");
  EXPECT_EQ(model_from_json(tf2)->get_layer("att")->input_shapes().size(), 3u);
  const Model kw = model_from_json(
      keras3_model("MultiHeadAttention", kMha,
                   {{Json::array(), {{"query", tensor("x")}, {"value", tensor("x")}, {"training", false}}}}));
  EXPECT_EQ(kw->output_shape(), (Shape{5, 4}));
  Json causal =
      keras3_model("Attention", {{"causal", true}}, {{Json::array({Json::array({tensor("x"), tensor("x")})}), {}}});
  const Json written = layer_to_json(*model_from_json(causal)->get_layer("att"));
  EXPECT_EQ(written["config"]["use_causal_mask"], true);
}

TEST(KerasAttentionJson, RefusesCallsTheGraphCannotCarryNamingTheLayer) {
  const auto x = Json::array({tensor("x")});
  EXPECT_NE(json_error(keras3_model("MultiHeadAttention", kMha,
                                    {{x, {{"value", tensor("x")}, {"return_attention_scores", true}}}}))
                .find("layer 'att' (MultiHeadAttention): return_attention_scores gives a second output"),
            std::string::npos);
  EXPECT_NE(json_error(keras3_model("MultiHeadAttention", kMha,
                                    {{x, {{"value", tensor("x")}, {"attention_mask", tensor("x")}}}}))
                .find("layer 'att' (MultiHeadAttention): call argument 'attention_mask'"),
            std::string::npos);
  // The masks Keras records in a call are the inputs' own: the graph derives them again (no error).
  EXPECT_EQ(json_error(keras3_model(
                "Attention", Json::object(),
                {{Json::array({Json::array({tensor("x"), tensor("x")})}), {{"mask", {tensor("x"), nullptr}}}}})),
            "(no error)");
  EXPECT_NE(json_error(
                keras3_model("MultiHeadAttention", kMha,
                             {{x, {{"value", tensor("x")}, {"use_causal_mask", true}}}, {x, {{"value", tensor("x")}}}}))
                .find("torchfit holds them in the layer, the same for every call"),
            std::string::npos);
  EXPECT_NE(json_error(keras3_model("MultiHeadAttention", {{"num_heads", 2}, {"key_dim", 3}, {"use_gate", true}},
                                    {{x, {{"value", tensor("x")}}}}))
                .find("use_gate true is not supported (gated attention)"),
            std::string::npos);
  const Json gqa = {{"head_dim", 2}, {"num_query_heads", 4}, {"num_key_value_heads", 2}};
  auto gqa_with = [&](Json extra) {
    Json c = gqa;
    c.update(extra);
    return json_error(keras3_model("GroupQueryAttention", c, {{x, {{"value", tensor("x")}}}}));
  };
  EXPECT_NE(gqa_with({{"use_gate", true}}).find("layer 'att' (GroupQueryAttention): use_gate true is not supported"),
            std::string::npos);
  EXPECT_NE(gqa_with({{"sliding_window", 4}}).find("sliding_window 4 is not supported (a sliding-window mask)"),
            std::string::npos);
  EXPECT_NE(gqa_with({{"flash_attention", true}, {"dropout", 0.1}})
                .find("dropout 0.1 is not supported when flash attention is enabled"),
            std::string::npos);
  EXPECT_EQ(gqa_with({{"flash_attention", true}, {"use_gate", false}, {"sliding_window", nullptr}, {"seed", 3}}),
            "(no error)");
  EXPECT_NE(gqa_with({{"num_key_value_heads", 3}}).find("num_query_heads must be divisible by num_key_value_heads"),
            std::string::npos);
  EXPECT_NE(json_error(keras3_model("GroupQueryAttention", gqa,
                                    {{x, {{"value", tensor("x")}, {"return_attention_scores", true}}}}))
                .find("layer 'att' (GroupQueryAttention): return_attention_scores gives a second output"),
            std::string::npos);
  EXPECT_NE(json_error(keras3_model("MultiHeadAttention", kMha, {{x, Json::object()}}))
                .find("takes {query, value} or {query, value, key}, got 1"),
            std::string::npos);
}

}  // namespace keras_attention_test
}  // namespace torchfit
