// MultiHeadAttention, Attention and AdditiveAttention (keras.layers): values and gradients against the float64
// NumPy reference written from Keras 3's source (tests/layers/reference/keras_attention_reference.py: causal
// masks, attention masks, query and value masks, cross attention with a key, value_dim, output_shape, no
// biases, dot / concat / additive scores), Keras's weight layout, regularizers, dropout, the config round
// trip and bad input.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <torchfit/layers/attention.h>
#include <torchfit/layers/multi_head_attention.h>
#include <torchfit/layers/registry.h>

#include "support/keras_reference.h"
#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;
using torchfit::testing::tensor_json;

namespace {

// Random Keras weights (normal, σ 0.5) set into a built layer; returned in Keras's order.
std::vector<at::Tensor> random_keras_weights(Layer& layer) {
  std::vector<at::Tensor> w;
  for (const auto& t : layer.keras_weights()) w.push_back(at::randn(t.sizes()) * 0.5);
  layer.set_keras_weights(w);
  return w;
}

// The reference request of a MultiHeadAttention: its Keras weights by the script's names.
Json mha_request(MultiHeadAttentionImpl& mha, const std::vector<at::Tensor>& w, const at::Tensor& q,
                 const at::Tensor& v, const at::Tensor& k) {
  Json req = {{"op", "attention_mha"},
              {"x", tensor_json(q)},
              {"value", tensor_json(v)},
              {"key", k.defined() ? tensor_json(k) : Json()},
              {"key_dim", mha.options.key_dim()},
              {"use_causal_mask", mha.options.use_causal_mask()}};
  const auto names = mha.keras_weight_names();
  for (size_t i = 0; i < names.size(); ++i) {
    std::string n = names[i];
    n.replace(n.find('/'), 1, "_");
    if (n.rfind("attention_output", 0) == 0) n = "output" + n.substr(16);
    req[n] = tensor_json(w[i]);
  }
  return req;
}

struct MhaCase {
  int64_t heads, key_dim;
  std::optional<int64_t> value_dim;
  bool bias, causal, with_key;
  std::optional<int64_t> out;
  int64_t t, s, dq, dv, dk;
};

std::string build_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(MultiHeadAttention, MatchesKerasForSelfCrossCausalAndMaskedAttention) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const std::vector<MhaCase> cases = {
      {2, 3, std::nullopt, true, false, false, std::nullopt, 4, 4, 5, 5, 5},  // self-attention shapes
      {2, 3, std::nullopt, true, true, false, std::nullopt, 4, 4, 5, 5, 5},   // causal
      {3, 2, 4, false, false, true, 6, 3, 5, 4, 6, 2},                        // cross, key, value_dim, output_shape
      {1, 4, std::nullopt, true, true, true, std::nullopt, 5, 3, 3, 2, 4},    // causal with T > S
  };
  at::manual_seed(3);
  for (const auto& c : cases) {
    SCOPED_TRACE("heads " + std::to_string(c.heads) + " causal " + std::to_string(c.causal));
    MultiHeadAttentionOptions o(c.heads, c.key_dim);
    o.value_dim(c.value_dim).use_bias(c.bias).use_causal_mask(c.causal);
    if (c.out) o.output_shape(KerasAxes({*c.out}));
    MultiHeadAttention mha(o);
    std::vector<Shape> shapes = {{c.t, c.dq}, {c.s, c.dv}};
    if (c.with_key) shapes.push_back({c.s, c.dk});
    EXPECT_EQ(mha->build_multi(shapes), (Shape{c.t, c.out.value_or(c.dq)}));
    const auto w = random_keras_weights(*mha);
    const at::Tensor q = at::randn({2, c.t, c.dq}), v = at::randn({2, c.s, c.dv});
    const at::Tensor k = c.with_key ? at::randn({2, c.s, c.dk}) : at::Tensor();
    std::vector<at::Tensor> xs = {q, v};
    if (k.defined()) xs.push_back(k);
    const at::Tensor got = mha->forward_multi(xs);
    torchfit::testing::expect_matches_reference(got, torchfit::testing::keras_reference(mha_request(*mha, w, q, v, k)));
    // An explicit attention_mask (N, T, S), combined with the causal one; one query row masked entirely.
    at::Tensor mask = at::rand({2, c.t, c.s}).gt(0.3);
    mask[0][0].fill_(false);
    Json req = mha_request(*mha, w, q, v, k);
    req["attention_mask"] = tensor_json(mask.to(at::kFloat));
    torchfit::testing::expect_matches_reference(mha->forward_attention(q, v, k, mask),
                                                torchfit::testing::keras_reference(req));
  }
}

TEST(MultiHeadAttention, GradientsMatchCentralDifferences) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(4);
  MultiHeadAttention mha(MultiHeadAttentionOptions(2, 2).value_dim(3).use_causal_mask(true));
  mha->build_multi({{3, 4}, {3, 2}, {3, 3}});
  const auto w = random_keras_weights(*mha);
  const at::Tensor q = at::randn({2, 3, 4}).requires_grad_(), v = at::randn({2, 3, 2}).requires_grad_();
  const at::Tensor k = at::randn({2, 3, 3}).requires_grad_();
  const at::Tensor y = mha->forward_multi({q, v, k});
  const at::Tensor r = at::randn(y.sizes());
  (y * r).sum().backward();
  Json req = mha_request(*mha, w, q, v, k);
  req["vjp"] = tensor_json(r);
  req["wrt"] = {"value",      "key",          "query_kernel",  "query_bias",
                "key_kernel", "value_kernel", "output_kernel", "output_bias"};
  const auto g = torchfit::testing::keras_reference_grads(req);
  ASSERT_FALSE(g.empty());
  torchfit::testing::expect_matches_reference(q.grad(), g.at("x"));
  torchfit::testing::expect_matches_reference(v.grad(), g.at("value"));
  torchfit::testing::expect_matches_reference(k.grad(), g.at("key"));
  torchfit::testing::expect_matches_reference(mha->query_dense->kernel.grad(), g.at("query_kernel"));
  torchfit::testing::expect_matches_reference(mha->query_dense->bias.grad(), g.at("query_bias"));
  torchfit::testing::expect_matches_reference(mha->key_dense->kernel.grad(), g.at("key_kernel"));
  torchfit::testing::expect_matches_reference(mha->value_dense->kernel.grad(), g.at("value_kernel"));
  torchfit::testing::expect_matches_reference(mha->output_dense->kernel.grad(), g.at("output_kernel"));
  torchfit::testing::expect_matches_reference(mha->output_dense->bias.grad(), g.at("output_bias"));
  // The key's bias gets no gradient in Keras either (softmax is invariant to a per-row shift), up to rounding.
  EXPECT_LT(mha->key_dense->bias.grad().abs().max().item<double>(), 1e-5);
}

// Keras's weights: four EinsumDense sublayers, shapes and names in Keras's order; parameter count; the
// scores of forward_attention; the regularizers reach every projection; dropout only in training.
TEST(MultiHeadAttention, KerasWeightsRegularizersScoresAndDropout) {
  auto mha = std::dynamic_pointer_cast<MultiHeadAttentionImpl>(
      layer_from_json({{"class_name", "MultiHeadAttention"},
                       {"config",
                        {{"name", "mha"},
                         {"num_heads", 2},
                         {"key_dim", 3},
                         {"value_dim", 4},
                         {"dropout", 0.5},
                         {"kernel_regularizer", {{"class_name", "L2"}, {"config", {{"l2", 0.1}}}}}}}}));
  ASSERT_TRUE(mha);
  mha->build_multi({{5, 6}, {7, 8}});
  EXPECT_EQ(mha->keras_weight_names(),
            (std::vector<std::string>{"query/kernel", "query/bias", "key/kernel", "key/bias", "value/kernel",
                                      "value/bias", "attention_output/kernel", "attention_output/bias"}));
  std::vector<std::string> shapes;
  for (const auto& t : mha->keras_weights()) shapes.push_back(format_sizes(t.sizes().vec()));
  EXPECT_EQ(shapes, (std::vector<std::string>{"(6, 2, 3)", "(2, 3)", "(8, 2, 3)", "(2, 3)", "(8, 2, 4)", "(2, 4)",
                                              "(2, 4, 6)", "(6)"}));
  EXPECT_EQ(mha->count_params(), 6 * 6 + 6 + 8 * 6 + 6 + 8 * 8 + 8 + 8 * 6 + 6);
  double want = 0;
  for (const auto& d : {mha->query_dense, mha->key_dense, mha->value_dense, mha->output_dense})
    want += 0.1 * d->kernel.square().sum().item<double>();
  EXPECT_NEAR(mha->regularization_loss().item<double>(), want, 1e-4 * want);
  const at::Tensor q = at::randn({2, 5, 6}), v = at::randn({2, 7, 8});
  mha->eval();
  at::Tensor scores;
  const at::Tensor y = mha->forward_attention(q, v, {}, {}, &scores);
  EXPECT_EQ(scores.sizes(), (at::IntArrayRef{2, 2, 5, 7}));
  EXPECT_TRUE(at::allclose(scores.sum(-1), at::ones({2, 2, 5})));
  EXPECT_TRUE(at::equal(y, mha->forward_multi({q, v})));
  mha->train();
  EXPECT_FALSE(at::allclose(mha->forward_multi({q, v}), y));
}

TEST(MultiHeadAttention, ConfigRoundTripsAndReadsKerasForms) {
  MultiHeadAttention mha(MultiHeadAttentionOptions(4, 8).value_dim(2).output_shape(KerasAxes({3})).name("m"));
  const Json written = layer_to_json(*mha);
  EXPECT_EQ(written["config"]["num_heads"], 4);
  EXPECT_EQ(written["config"]["output_shape"], Json::array({3}));
  EXPECT_EQ(layer_to_json(*layer_from_json(written)), written);
  Json keras = written;  // Keras writes attention_axes [1] after build, output_shape an int when given one
  keras["config"]["attention_axes"] = {1};
  keras["config"]["output_shape"] = 3;
  EXPECT_EQ(layer_to_json(*layer_from_json(keras))["config"]["output_shape"], 3);
}

TEST(MultiHeadAttention, BadInputNamesTheLayer) {
  using torchfit::testing::layer_config_error;
  auto spec = [](Json extra) {
    Json c = {{"name", "m"}, {"num_heads", 2}, {"key_dim", 3}};
    c.update(extra);
    return Json{{"class_name", "MultiHeadAttention"}, {"config", c}};
  };
  EXPECT_NE(layer_config_error(spec({{"key_dim", 0}}))
                .find("layer 'm' (MultiHeadAttention): key_dim must be a "
                      "positive integer, got 0"),
            std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"num_heads", -1}})).find("num_heads must be a positive"), std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"value_dim", 0}})).find("value_dim must be"), std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"dropout", 1.0}})).find("dropout must be in [0, 1)"), std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"attention_axes", {1, 2}}})).find("attention_axes [1,2] is not supported"),
            std::string::npos);
  EXPECT_NE(layer_config_error(spec({{"output_shape", {2, 3}}})).find("output_shape [2,3] is not supported"),
            std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "MultiHeadAttention"}, {"config", {{"name", "m"}, {"num_heads", 2}}}})
                .find("missing field 'key_dim'"),
            std::string::npos);
  auto build = [](std::vector<Shape> shapes) {
    return build_error([&] { MultiHeadAttention(MultiHeadAttentionOptions(2, 3).name("m"))->build_multi(shapes); });
  };
  const std::string steps = build({{4, 5}, {6, 5}, {7, 5}});
  EXPECT_NE(steps.find("layer 'm' (MultiHeadAttention): value and key must have the same steps"), std::string::npos)
      << steps;
  EXPECT_NE(build({{4, 5, 2}, {6, 5}}).find("must be sequences (steps, features)"), std::string::npos);
  EXPECT_NE(build({{4, 5}}).find("takes {query, value} or {query, value, key}, got 1"), std::string::npos);
  EXPECT_NE(build({{4, 5}, {4, 5}, {4, 5}, {4, 5}}).find("got 4 input(s)"), std::string::npos);
  MultiHeadAttention built(MultiHeadAttentionOptions(2, 3).name("m"));
  EXPECT_NE(build_error([&] { built->build(Shape{4, 5}); }).find("takes a list of inputs"), std::string::npos);
  built->build_multi({{4, 5}, {6, 5}});
  EXPECT_NE(build_error([&] {
              built->forward_multi({at::randn({2, 4, 5}), at::randn({2, 6, 5}), at::randn({2, 5, 5})});
            }).find("value and key must have the same steps"),
            std::string::npos);
  EXPECT_NE(build_error([&] {
              built->forward_attention(at::randn({2, 4, 5}), at::randn({2, 6, 5}), {}, at::ones({4, 5}));
            }).find("attention_mask must be (N, T, S) or (T, S) = (2, 4, 6), got (4, 5)"),
            std::string::npos);
}

// Attention (dot, dot scaled, concat, concat scaled) and AdditiveAttention (scaled or not): causal, value and
// query masks, with and without a key.
TEST(Attention, MatchesKerasForEveryScoreModeAndMask) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  struct Case {
    std::string op;
    bool scale, causal, with_key, masks;
  };
  const std::vector<Case> cases = {
      {"attention_dot", false, false, false, false},    {"attention_dot", true, true, true, true},
      {"attention_concat", false, true, false, false},  {"attention_concat", true, false, true, true},
      {"attention_additive", true, false, false, true}, {"attention_additive", false, true, true, false}};
  at::manual_seed(6);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.op + " scale " + std::to_string(c.scale) + " causal " + std::to_string(c.causal));
    std::shared_ptr<BaseAttentionImpl> layer;
    if (c.op == "attention_additive") {
      layer = AdditiveAttention(AdditiveAttentionOptions().use_scale(c.scale).use_causal_mask(c.causal)).ptr();
    } else {
      layer = Attention(AttentionOptions()
                            .use_scale(c.scale)
                            .score_mode(c.op == "attention_dot" ? "dot" : "concat")
                            .use_causal_mask(c.causal))
                  .ptr();
    }
    const int64_t dv = c.with_key ? 2 : 3;  // without a key the value is the key: the query's features
    std::vector<Shape> shapes = {{4, 3}, {5, dv}};
    if (c.with_key) shapes.push_back({5, 3});
    EXPECT_EQ(layer->build_multi(shapes), (Shape{4, dv}));
    const auto w = random_keras_weights(*layer);
    const at::Tensor q = at::randn({2, 4, 3}), v = at::randn({2, 5, dv});
    const at::Tensor k = c.with_key ? at::randn({2, 5, 3}) : at::Tensor();
    const at::Tensor qm = c.masks ? at::rand({2, 4}).gt(0.3) : at::Tensor();
    at::Tensor vm = c.masks ? at::rand({2, 5}).gt(0.4) : at::Tensor();
    if (vm.defined()) vm.select(1, 0).fill_(true);  // every row keeps a value step (Keras's requirement)
    Json req = {{"op", c.op}, {"x", tensor_json(q)}, {"value", tensor_json(v)}, {"use_causal_mask", c.causal}};
    if (k.defined()) req["key"] = tensor_json(k);
    if (c.masks) {
      req["query_mask"] = tensor_json(qm.to(at::kFloat));
      req["value_mask"] = tensor_json(vm.to(at::kFloat));
    }
    const auto names = layer->keras_weight_names();
    for (size_t i = 0; i < names.size(); ++i) req[names[i]] = tensor_json(w[i]);
    const at::Tensor got = layer->forward_attention(q, v, k, qm, vm);
    torchfit::testing::expect_matches_reference(got, torchfit::testing::keras_reference(req));
    if (!c.masks) {
      std::vector<at::Tensor> xs = {q, v};
      if (k.defined()) xs.push_back(k);
      EXPECT_TRUE(at::equal(layer->forward_multi(xs), got));
    }
  }
}

TEST(Attention, GradientsMatchCentralDifferences) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(8);
  Attention concat(AttentionOptions().use_scale(true).score_mode("concat").use_causal_mask(true));
  AdditiveAttention additive;
  for (BaseAttentionImpl* layer :
       {static_cast<BaseAttentionImpl*>(concat.get()), static_cast<BaseAttentionImpl*>(additive.get())}) {
    SCOPED_TRACE(layer->class_name());
    layer->build_multi({{3, 2}, {4, 3}, {4, 2}});
    const auto w = random_keras_weights(*layer);
    const at::Tensor q = at::randn({2, 3, 2}).requires_grad_(), v = at::randn({2, 4, 3}).requires_grad_();
    const at::Tensor k = at::randn({2, 4, 2}).requires_grad_();
    const at::Tensor y = layer->forward_multi({q, v, k});
    const at::Tensor r = at::randn(y.sizes());
    (y * r).sum().backward();
    const bool is_concat = layer == concat.get();
    Json req = {{"op", is_concat ? "attention_concat" : "attention_additive"},
                {"x", tensor_json(q)},
                {"value", tensor_json(v)},
                {"key", tensor_json(k)},
                {"use_causal_mask", is_concat},
                {"vjp", tensor_json(r)}};
    const auto names = layer->keras_weight_names();
    for (size_t i = 0; i < names.size(); ++i) req[names[i]] = tensor_json(w[i]);
    req["wrt"] = Json(names);
    req["wrt"].push_back("value");
    req["wrt"].push_back("key");
    const auto g = torchfit::testing::keras_reference_grads(req);
    ASSERT_FALSE(g.empty());
    torchfit::testing::expect_matches_reference(q.grad(), g.at("x"));
    torchfit::testing::expect_matches_reference(v.grad(), g.at("value"));
    torchfit::testing::expect_matches_reference(k.grad(), g.at("key"));
    auto params = layer->named_parameters(false);
    for (const auto& n : names) torchfit::testing::expect_matches_reference(params[n].grad(), g.at(n));
  }
}

TEST(Attention, KerasWeightsConfigAndBadInput) {
  Attention a(AttentionOptions().use_scale(true).score_mode("concat").name("a"));
  a->build_multi({{4, 3}, {5, 3}});
  EXPECT_EQ(a->keras_weight_names(), (std::vector<std::string>{"scale", "concat_score_weight"}));
  EXPECT_EQ(a->count_params(), 2);
  EXPECT_EQ(a->keras_weights()[0].dim(), 0);  // Keras's scalar weights, shape ()
  AdditiveAttention add(AdditiveAttentionOptions().name("add"));
  add->build_multi({{4, 3}, {5, 2}, {5, 3}});
  EXPECT_EQ(add->keras_weights()[0].sizes(), (at::IntArrayRef{3}));
  AdditiveAttention unscaled(AdditiveAttentionOptions().use_scale(false));
  unscaled->build_multi({{4, 3}, {5, 3}});
  EXPECT_EQ(unscaled->count_params(), 0);
  for (const Layer* l : {static_cast<const Layer*>(a.get()), static_cast<const Layer*>(add.get())}) {
    const Json written = layer_to_json(*l);
    EXPECT_EQ(layer_to_json(*layer_from_json(written)), written);
  }
  using torchfit::testing::layer_config_error;
  EXPECT_NE(layer_config_error({{"class_name", "Attention"}, {"config", {{"name", "a"}, {"score_mode", "sum"}}}})
                .find("layer 'a' (Attention): score_mode must be \"dot\" or \"concat\", got \"sum\""),
            std::string::npos);
  EXPECT_NE(layer_config_error({{"class_name", "AdditiveAttention"}, {"config", {{"name", "b"}, {"dropout", -0.1}}}})
                .find("layer 'b' (AdditiveAttention): dropout must be in [0, 1)"),
            std::string::npos);
  EXPECT_NE(build_error([] {
              Attention(AttentionOptions().name("a"))->build_multi({{4, 3}, {5, 3}, {5, 2}});
            }).find("layer 'a' (Attention): query and key must have the same features"),
            std::string::npos);
  EXPECT_NE(build_error([] {
              Attention(AttentionOptions().name("a"))->build_multi({{4, 3}, {5, 3}, {6, 3}});
            }).find("value and key must have the same steps"),
            std::string::npos);
  EXPECT_NE(build_error([] {
              Attention(AttentionOptions().name("a"))->build_multi({{4, 3, 1}, {5, 3}});
            }).find("must be sequences"),
            std::string::npos);
  EXPECT_NE(build_error([&] {
              a->forward_attention(at::randn({2, 4, 3}), at::randn({2, 5, 3}), {}, at::ones({2, 5}));
            }).find("the query mask must be (N, T) = (2, 4), got (2, 5)"),
            std::string::npos);
}
