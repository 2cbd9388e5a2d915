// GroupQueryAttention (keras.layers.GroupQueryAttention, Keras 3): values, scores and gradients against the
// float64 NumPy reference written from Keras 3's grouped_query_attention.py
// (tests/layers/reference/keras_attention_reference.py, "attention_gqa": the key and value heads repeated as
// NumPy's repeat, causal, attention, query, value and key masks), the graph's Keras masks, Keras's weight
// layout, regularizers, dropout, automatic names, the config round trip and bad input.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <torchfit/layers/group_query_attention.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/masking.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/model.h>

#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;
using torchfit::testing::expect_matches_reference;
using torchfit::testing::keras_reference;
using torchfit::testing::tensor_json;

namespace {

// Random Keras weights (normal, σ 0.5) set into a built layer; returned in Keras's order.
std::vector<at::Tensor> random_keras_weights(Layer& layer) {
  std::vector<at::Tensor> w;
  for (const auto& t : layer.keras_weights()) w.push_back(at::randn(t.sizes()) * 0.5);
  layer.set_keras_weights(w);
  return w;
}

// The reference request of a GroupQueryAttention: its Keras weights by the script's names.
Json gqa_request(const GroupQueryAttentionImpl& gqa, const std::vector<at::Tensor>& w, const at::Tensor& q,
                 const at::Tensor& v, const at::Tensor& k) {
  const auto& o = gqa.options;
  Json req = {{"op", "attention_gqa"},
              {"x", tensor_json(q)},
              {"value", tensor_json(v)},
              {"key", k.defined() ? tensor_json(k) : Json()},
              {"head_dim", o.head_dim()},
              {"num_query_heads", o.num_query_heads()},
              {"num_key_value_heads", o.num_key_value_heads()},
              {"use_causal_mask", o.use_causal_mask()}};
  const auto names = gqa.keras_weight_names();
  for (size_t i = 0; i < names.size(); ++i) {
    std::string n = names[i];
    n.replace(n.find('/'), 1, "_");
    if (n.rfind("attention_output", 0) == 0) n = "output" + n.substr(16);
    req[n] = tensor_json(w[i]);
  }
  return req;
}

struct GqaCase {
  int64_t head_dim, query_heads, kv_heads;
  bool bias, causal, with_key;
  int64_t t, s, d, dk;
};

}  // namespace

// Grouped (4 query heads on 2), multi-query (3 on 1), multi-head (2 on 2), 6 on 3; self and cross attention
// with a key, T > S and T < S under the causal mask; then an explicit attention_mask with one query row masked
// entirely, and the scores (Keras's return_attention_scores).
TEST(GroupQueryAttention, MatchesKerasForGroupedMultiQueryCausalAndMaskedAttention) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<GqaCase> cases = {
      {3, 4, 2, true, false, false, 4, 4, 5, 5},  // grouped self-attention
      {3, 4, 2, true, true, false, 4, 4, 5, 5},   // causal
      {2, 3, 1, false, false, true, 3, 5, 4, 2},  // multi-query, cross with a key, no biases
      {2, 2, 2, true, true, true, 5, 3, 3, 4},    // as multi-head, causal with T > S
      {2, 6, 3, true, true, true, 2, 4, 3, 3},    // 6 on 3, causal with T < S
  };
  at::manual_seed(3);
  for (const auto& c : cases) {
    SCOPED_TRACE("heads " + std::to_string(c.query_heads) + " on " + std::to_string(c.kv_heads) + " causal " +
                 std::to_string(c.causal));
    GroupQueryAttention gqa(
        GroupQueryAttentionOptions(c.head_dim, c.query_heads, c.kv_heads).use_bias(c.bias).use_causal_mask(c.causal));
    std::vector<Shape> shapes = {{c.t, c.d}, {c.s, c.d}};
    if (c.with_key) shapes.push_back({c.s, c.dk});
    EXPECT_EQ(gqa->build_multi(shapes), (Shape{c.t, c.d}));
    const auto w = random_keras_weights(*gqa);
    const at::Tensor q = at::randn({2, c.t, c.d}), v = at::randn({2, c.s, c.d});
    const at::Tensor k = c.with_key ? at::randn({2, c.s, c.dk}) : at::Tensor();
    std::vector<at::Tensor> xs = {q, v};
    if (k.defined()) xs.push_back(k);
    expect_matches_reference(gqa->forward_multi(xs), keras_reference(gqa_request(*gqa, w, q, v, k)));
    at::Tensor mask = at::rand({2, c.t, c.s}).gt(0.3);
    mask[0][0].fill_(false);
    Json req = gqa_request(*gqa, w, q, v, k);
    req["attention_mask"] = tensor_json(mask.to(at::kFloat));
    at::Tensor scores;
    expect_matches_reference(gqa->forward_attention(q, v, k, mask, &scores), keras_reference(req));
    req["return"] = "scores";
    expect_matches_reference(scores, keras_reference(req));
    EXPECT_EQ(scores.sizes(), (at::IntArrayRef{2, c.query_heads, c.t, c.s}));
  }
}

// The inputs' Keras masks through the graph (Masking before the query and the value): Keras's
// _compute_attention_mask of query_mask and value_mask, as the reference computes it; the output carries the
// query's mask. A key mask through forward_masked.
TEST(GroupQueryAttention, TakesTheQueryValueAndKeyMasksAsKeras) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(12);
  at::Tensor q = at::randn({2, 4, 3}), v = at::randn({2, 5, 3});
  q[0][3].zero_();
  q[1][1].zero_();
  v[0][1].zero_();
  v[0][2].zero_();
  v[1][4].zero_();
  const at::Tensor q_keep = at::tensor({1, 1, 1, 0, 1, 0, 1, 1}, at::kFloat).reshape({2, 4});
  const at::Tensor v_keep = at::tensor({1, 0, 0, 1, 1, 1, 1, 1, 1, 0}, at::kFloat).reshape({2, 5});
  KerasTensor qi = Input({4, 3}), vi = Input({5, 3});
  auto gqa = GroupQueryAttention(GroupQueryAttentionOptions(2, 4, 2).use_causal_mask(true));
  KerasTensor y = gqa->call({Masking()->call(qi), Masking()->call(vi)});
  Model model({qi, vi}, {y}, "masked_gqa");
  const auto w = random_keras_weights(*gqa);
  Json req = gqa_request(*gqa, w, q, v, at::Tensor());
  req["query_mask"] = tensor_json(q_keep);
  req["value_mask"] = tensor_json(v_keep);
  expect_matches_reference(model->forward_multi({q, v})[0], keras_reference(req));
  EXPECT_TRUE(at::equal(model->output_masks()[0], q_keep.to(at::kBool)));  // the query's mask, as Keras
  const at::Tensor k = at::randn({2, 5, 2}), k_keep = at::rand({2, 5}).gt(0.4);
  GroupQueryAttention cross(GroupQueryAttentionOptions(3, 2, 1));
  cross->build_multi({{4, 3}, {5, 3}, {5, 2}});
  const auto wc = random_keras_weights(*cross);
  Json creq = gqa_request(*cross, wc, q, v, k);
  creq["value_mask"] = tensor_json(v_keep);
  creq["key_mask"] = tensor_json(k_keep.to(at::kFloat));
  expect_matches_reference(cross->forward_masked({q, v, k}, {at::Tensor(), v_keep.to(at::kBool), k_keep}),
                           keras_reference(creq));
}

TEST(GroupQueryAttention, GradientsMatchCentralDifferences) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(4);
  GroupQueryAttention gqa(GroupQueryAttentionOptions(2, 4, 2).use_causal_mask(true));
  gqa->build_multi({{3, 4}, {3, 4}, {3, 3}});
  const auto w = random_keras_weights(*gqa);
  const at::Tensor q = at::randn({2, 3, 4}).requires_grad_(), v = at::randn({2, 3, 4}).requires_grad_();
  const at::Tensor k = at::randn({2, 3, 3}).requires_grad_();
  const at::Tensor y = gqa->forward_multi({q, v, k});
  const at::Tensor r = at::randn(y.sizes());
  (y * r).sum().backward();
  Json req = gqa_request(*gqa, w, q, v, k);
  req["vjp"] = tensor_json(r);
  req["wrt"] = {"value",        "key",        "query_kernel",  "query_bias", "key_kernel",
                "value_kernel", "value_bias", "output_kernel", "output_bias"};
  const auto g = torchfit::testing::keras_reference_grads(req);
  ASSERT_FALSE(g.empty());
  expect_matches_reference(q.grad(), g.at("x"));
  expect_matches_reference(v.grad(), g.at("value"));
  expect_matches_reference(k.grad(), g.at("key"));
  expect_matches_reference(gqa->query_dense->kernel.grad(), g.at("query_kernel"));
  expect_matches_reference(gqa->query_dense->bias.grad(), g.at("query_bias"));
  expect_matches_reference(gqa->key_dense->kernel.grad(), g.at("key_kernel"));
  expect_matches_reference(gqa->value_dense->kernel.grad(), g.at("value_kernel"));
  expect_matches_reference(gqa->value_dense->bias.grad(), g.at("value_bias"));
  expect_matches_reference(gqa->output_dense->kernel.grad(), g.at("output_kernel"));
  expect_matches_reference(gqa->output_dense->bias.grad(), g.at("output_bias"));
  // The key's bias gets no gradient in Keras either (softmax is invariant to a per-row shift), up to rounding.
  EXPECT_LT(gqa->key_dense->bias.grad().abs().max().item<double>(), 1e-5);
}

// Keras's weights: four EinsumDense sublayers, shapes and names in Keras's order (the key and value kernels
// with the key/value heads); parameter count; the regularizers reach every projection; dropout only in
// training; Keras's automatic names (of its class GroupedQueryAttention).
TEST(GroupQueryAttention, KerasWeightsRegularizersDropoutAndNames) {
  auto gqa = std::dynamic_pointer_cast<GroupQueryAttentionImpl>(
      layer_from_json({{"class_name", "GroupQueryAttention"},
                       {"config",
                        {{"name", "gqa"},
                         {"head_dim", 3},
                         {"num_query_heads", 4},
                         {"num_key_value_heads", 2},
                         {"dropout", 0.5},
                         {"kernel_regularizer", {{"class_name", "L2"}, {"config", {{"l2", 0.1}}}}}}}}));
  ASSERT_TRUE(gqa);
  gqa->build_multi({{5, 6}, {7, 6}, {7, 8}});
  EXPECT_EQ(gqa->keras_weight_names(),
            (std::vector<std::string>{"query/kernel", "query/bias", "key/kernel", "key/bias", "value/kernel",
                                      "value/bias", "attention_output/kernel", "attention_output/bias"}));
  std::vector<std::string> shapes;
  for (const auto& t : gqa->keras_weights()) shapes.push_back(format_sizes(t.sizes().vec()));
  EXPECT_EQ(shapes, (std::vector<std::string>{"(6, 4, 3)", "(4, 3)", "(8, 2, 3)", "(2, 3)", "(6, 2, 3)", "(2, 3)",
                                              "(4, 3, 6)", "(6)"}));
  EXPECT_EQ(gqa->count_params(), 6 * 12 + 12 + 8 * 6 + 6 + 6 * 6 + 6 + 12 * 6 + 6);
  double want = 0;
  for (const auto& d : {gqa->query_dense, gqa->key_dense, gqa->value_dense, gqa->output_dense})
    want += 0.1 * d->kernel.square().sum().item<double>();
  EXPECT_NEAR(gqa->regularization_loss().item<double>(), want, 1e-4 * want);
  const at::Tensor q = at::randn({2, 5, 6}), v = at::randn({2, 7, 6}), k = at::randn({2, 7, 8});
  gqa->eval();
  at::Tensor scores;
  const at::Tensor y = gqa->forward_attention(q, v, k, {}, &scores);
  EXPECT_TRUE(at::allclose(scores.sum(-1), at::ones({2, 4, 5})));
  EXPECT_TRUE(at::equal(y, gqa->forward_multi({q, v, k})));
  gqa->train();
  EXPECT_FALSE(at::allclose(gqa->forward_multi({q, v, k}), y));
  GroupQueryAttention plain(GroupQueryAttentionOptions(2, 2, 1).use_bias(false));
  plain->build_multi({{3, 4}, {3, 4}});
  EXPECT_EQ(plain->keras_weights().size(), 4u);
  EXPECT_EQ(plain->count_params(), 4 * 4 + 4 * 2 + 4 * 2 + 4 * 4);
  KerasTensor x = Input({3, 4});
  KerasTensor a = GroupQueryAttention(GroupQueryAttentionOptions(2, 2, 1))->call({x, x});
  KerasTensor b = GroupQueryAttention(GroupQueryAttentionOptions(2, 2, 1))->call({a, a});
  Model model({x}, {b}, "named");
  EXPECT_NO_THROW(model->get_layer("grouped_query_attention"));
  EXPECT_NO_THROW(model->get_layer("grouped_query_attention_1"));
}

TEST(GroupQueryAttention, ConfigRoundTripsAndReadsKerasForms) {
  GroupQueryAttention gqa(GroupQueryAttentionOptions(8, 6, 3).dropout(0.1).use_bias(false).name("g"));
  const Json written = layer_to_json(*gqa);
  EXPECT_EQ(written["class_name"], "GroupQueryAttention");
  EXPECT_EQ(written["config"]["head_dim"], 8);
  EXPECT_EQ(written["config"]["num_query_heads"], 6);
  EXPECT_EQ(written["config"]["num_key_value_heads"], 3);
  EXPECT_EQ(written["config"]["use_bias"], false);
  EXPECT_EQ(layer_to_json(*layer_from_json(written)), written);
}

TEST(GroupQueryAttention, BadInputNamesTheLayer) {
  using torchfit::testing::layer_config_error;
  auto spec = [](Json extra) {
    Json c = {{"name", "g"}, {"head_dim", 2}, {"num_query_heads", 6}, {"num_key_value_heads", 3}};
    c.update(extra);
    return Json{{"class_name", "GroupQueryAttention"}, {"config", c}};
  };
  const std::string divisible = layer_config_error(spec({{"num_key_value_heads", 4}}));
  EXPECT_NE(divisible.find("layer 'g' (GroupQueryAttention): num_query_heads must be divisible by "
                           "num_key_value_heads, got 6 and 4"),
            std::string::npos)
      << divisible;
  EXPECT_NE(layer_config_error(spec({{"head_dim", 0}})).find("head_dim must be a positive integer, got 0"),
            std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"num_key_value_heads", 0}})).find("num_key_value_heads must be a positive"),
            std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"num_query_heads", -2}})).find("num_query_heads must be a positive"),
            std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"dropout", 1.0}})).find("dropout must be in [0, 1)"), std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "GroupQueryAttention"},
                                {"config", {{"name", "g"}, {"head_dim", 2}, {"num_query_heads", 2}}}})
                .find("missing field 'num_key_value_heads'"),
            std::string::npos);
  auto build = [](std::vector<Shape> shapes) {
    return torchfit::testing::config_error_of(
        [&] { GroupQueryAttention(GroupQueryAttentionOptions(2, 2, 1).name("g"))->build_multi(shapes); });
  };
  const std::string features = build({{4, 5}, {6, 3}});
  EXPECT_NE(features.find("layer 'g' (GroupQueryAttention): the value's features must be the query's, got query "
                          "(None, 4, 5) and value (None, 6, 3)"),
            std::string::npos)
      << features;
  EXPECT_NE(build({{4, 5}, {6, 5}, {7, 5}}).find("value and key must have the same steps"), std::string::npos);
  EXPECT_NE(build({{4, 5, 2}, {6, 5}}).find("must be sequences (steps, features)"), std::string::npos);
  EXPECT_NE(build({{4, 5}}).find("takes {query, value} or {query, value, key}, got 1"), std::string::npos);
  GroupQueryAttention built(GroupQueryAttentionOptions(2, 2, 1).name("g"));
  EXPECT_NE(torchfit::testing::config_error_of([&] {
              built->build(Shape{4, 5});
            }).find("takes a list of inputs"),
            std::string::npos);
  built->build_multi({{4, 5}, {6, 5}});
  EXPECT_NE(torchfit::testing::config_error_of([&] {
              built->forward_attention(at::randn({2, 4, 5}), at::randn({2, 6, 5}), {}, at::ones({4, 5}));
            }).find("attention_mask must be (N, T, S) or (T, S) = (2, 4, 6), got (4, 5)"),
            std::string::npos);
}
