// Keras's initializers (layers/initializers.h) against the formulas of keras/src/initializers/*.py: the moments
// and bounds of large draws (stddev after truncation √(scale / fan) with fans from the Keras shape, uniform
// limits √(3·scale / fan)), Orthogonal's QᵀQ = I, the constant classes exactly; the names Keras's configs use;
// and the initializers a layer config names applied when the layer is built (Layer::set_initializer).
#include <gtest/gtest.h>

#include <cmath>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/initializers.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/model.h>

#include "support/layer_checks.h"

using namespace torchfit;
using Json = nlohmann::json;
using torchfit::testing::config_error_of;
using torchfit::testing::layer_config_error;

namespace {

Initializer named(const Json& spec) { return Initializer::from_json(spec, "test"); }

// Mean, population stddev and largest |x − mean_expected| of a draw, in double.
struct Moments {
  double mean, stddev, max_abs;
};
Moments moments_of(const at::Tensor& t) {
  const at::Tensor d = t.to(at::kDouble);
  return {d.mean().item<double>(), d.std(/*unbiased=*/false).item<double>(), d.abs().max().item<double>()};
}

// A draw of n values has a mean within 5 σ/√n of 0 and a stddev within 3 % of `stddev`.
void expect_moments(const at::Tensor& t, double stddev, const std::string& what) {
  const Moments m = moments_of(t);
  const double n = static_cast<double>(t.numel());
  EXPECT_NEAR(m.mean, 0.0, 5.0 * stddev / std::sqrt(n)) << what;
  EXPECT_NEAR(m.stddev / stddev, 1.0, 0.03) << what << ": stddev " << m.stddev << ", formula " << stddev;
}

}  // namespace

TEST(Initializers, KerasFansAreReceptiveFieldTimesChannels) {
  EXPECT_EQ(keras_fans({}), (std::pair<int64_t, int64_t>(1, 1)));
  EXPECT_EQ(keras_fans({7}), (std::pair<int64_t, int64_t>(7, 7)));
  EXPECT_EQ(keras_fans({20, 30}), (std::pair<int64_t, int64_t>(20, 30)));
  EXPECT_EQ(keras_fans({3, 3, 16, 32}), (std::pair<int64_t, int64_t>(144, 288)));
  EXPECT_EQ(keras_fans({5, 4, 8}), (std::pair<int64_t, int64_t>(20, 40)));
}

TEST(Initializers, VarianceScalingFamiliesMatchKerasFormulas) {
  at::manual_seed(1);
  const std::vector<int64_t> dense{200, 300}, conv{3, 3, 16, 32};  // fans (200, 300) and (144, 288)
  struct Case {
    const char* name;
    std::vector<int64_t> shape;
    double scale, fan;
    bool uniform;
  };
  const std::vector<Case> cases = {
      {"GlorotUniform", dense, 1.0, 250.0, true}, {"GlorotNormal", dense, 1.0, 250.0, false},
      {"HeUniform", conv, 2.0, 144.0, true},      {"HeNormal", conv, 2.0, 144.0, false},
      {"LecunUniform", dense, 1.0, 200.0, true},  {"LecunNormal", conv, 1.0, 144.0, false}};
  for (const auto& c : cases) {
    const at::Tensor t = named(c.name).draw(c.shape, "test");
    ASSERT_EQ(t.sizes().vec(), c.shape) << c.name;
    const double s = std::sqrt(c.scale / c.fan);  // the stddev after truncation / of the uniform
    expect_moments(t, s, c.name);
    // Uniform: within ±√3·s; truncated normal: within two stddev before truncation, s / 0.8796…
    const double bound = c.uniform ? std::sqrt(3.0) * s : 2.0 * s / 0.87962566103423978;
    EXPECT_LE(moments_of(t).max_abs, bound * (1 + 1e-6)) << c.name;
    EXPECT_GT(moments_of(t).max_abs, 0.97 * bound) << c.name << ": the draw does not reach its bound";
  }
}

TEST(Initializers, VarianceScalingArgumentsAndPlainDistributions) {
  at::manual_seed(2);
  const std::vector<int64_t> shape{400, 150};
  auto vs = [](double scale, const char* mode, const char* dist) {
    return named({{"class_name", "VarianceScaling"},
                  {"config", {{"scale", scale}, {"mode", mode}, {"distribution", dist}, {"seed", nullptr}}}});
  };
  expect_moments(vs(3.0, "fan_out", "untruncated_normal").draw(shape, "t"), std::sqrt(3.0 / 150), "fan_out normal");
  expect_moments(vs(0.5, "fan_in", "uniform").draw(shape, "t"), std::sqrt(0.5 / 400), "fan_in uniform");
  expect_moments(vs(1.0, "fan_avg", "normal").draw(shape, "t"), std::sqrt(1.0 / 275), "'normal' is truncated");
  EXPECT_LE(moments_of(vs(1.0, "fan_avg", "normal").draw(shape, "t")).max_abs,
            2.0 * std::sqrt(1.0 / 275) / 0.87962566103423978 * (1 + 1e-6));
  // Keras 3.15's input_axes / output_axes: the fans are products over those axes of the weight.
  const Initializer axes = named({{"class_name", "GlorotUniform"},
                                  {"config", {{"seed", nullptr}, {"input_axes", {0, 1}}, {"output_axes", {-1}}}}});
  expect_moments(axes.draw({20, 10, 4, 60}, "t"), std::sqrt(2.0 / (200 + 60)), "input_axes (0, 1), output_axes (-1)");
  expect_moments(named({{"class_name", "HeNormal"}, {"config", {{"input_axes", nullptr}, {"output_axes", nullptr}}}})
                     .draw(shape, "t"),
                 std::sqrt(2.0 / 400), "null axes: compute_fans");
  EXPECT_NE(config_error_of([&] {
              named({{"class_name", "GlorotUniform"}, {"config", {{"input_axes", {5}}, {"output_axes", {0}}}}})
                  .draw({3, 3}, "w");
            }).find("w: axis 5 is outside the weight (3, 3)"),
            std::string::npos);
  // Defaults: scale 1, fan_in, truncated normal.
  expect_moments(named("variance_scaling").draw(shape, "t"), std::sqrt(1.0 / 400), "defaults");

  const at::Tensor normal =
      named({{"class_name", "RandomNormal"}, {"config", {{"mean", 0.0}, {"stddev", 2.0}}}}).draw(shape, "t");
  expect_moments(normal, 2.0, "RandomNormal");
  const at::Tensor truncated = named("TruncatedNormal").draw(shape, "t");  // stddev 0.05 before truncation
  EXPECT_LE(moments_of(truncated).max_abs, 0.1 * (1 + 1e-6));
  expect_moments(truncated, 0.05 * 0.87962566103423978, "TruncatedNormal");
  const at::Tensor shifted =
      named({{"class_name", "TruncatedNormal"}, {"config", {{"mean", 3.0}, {"stddev", 1.0}}}}).draw(shape, "t");
  EXPECT_NEAR(shifted.mean().item<double>(), 3.0, 0.02);
  EXPECT_GE(shifted.min().item<double>(), 1.0 - 1e-6);
  const at::Tensor uniform = named("uniform").draw(shape, "t");  // Keras's alias of RandomUniform(−0.05, 0.05)
  EXPECT_GE(uniform.min().item<double>(), -0.05);
  EXPECT_LT(uniform.max().item<double>(), 0.05);
  expect_moments(uniform, 0.05 / std::sqrt(3.0), "RandomUniform");
}

TEST(Initializers, OrthogonalGivesOrthonormalColumnsOrRows) {
  at::manual_seed(3);
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{50, 30}, {30, 50}, {3, 3, 4, 8}, {8, 8}}) {
    const at::Tensor q = named("orthogonal").draw(shape, "t").to(at::kDouble);
    ASSERT_EQ(q.sizes().vec(), shape);
    const at::Tensor m = q.reshape({-1, shape.back()});
    const at::Tensor gram = m.size(0) >= m.size(1) ? m.t().mm(m) : m.mm(m.t());
    EXPECT_LT((gram - at::eye(gram.size(0), at::kDouble)).abs().max().item<double>(), 1e-5) << shape.size();
  }
  const at::Tensor g = named({{"class_name", "OrthogonalInitializer"}, {"config", {{"gain", 2.0}}}}).draw({6, 6}, "t");
  EXPECT_LT((g.t().mm(g) - 4.0 * at::eye(6)).abs().max().item<double>(), 1e-5);
  EXPECT_NE(config_error_of([] {
              named("Orthogonal").draw({5}, "layer 'r' (Dense): kernel_initializer");
            }).find("layer 'r' (Dense): kernel_initializer: Orthogonal needs a weight of rank >= 2"),
            std::string::npos);
}

TEST(Initializers, ConstantClassesAreExact) {
  EXPECT_TRUE(at::equal(named("zeros").draw({2, 3}, "t"), at::zeros({2, 3})));
  EXPECT_TRUE(at::equal(named("one").draw({4}, "t"), at::ones({4})));
  EXPECT_TRUE(at::equal(named({{"class_name", "Constant"}, {"config", {{"value", 0.25}}}}).draw({3, 1}, "t"),
                        at::full({3, 1}, 0.25)));
  EXPECT_TRUE(at::equal(named({{"class_name", "IdentityInitializer"}, {"config", {{"gain", 3.0}}}}).draw({2, 3}, "t"),
                        at::eye(2, 3) * 3.0));
  EXPECT_NE(config_error_of([] {
              named("identity").draw({3, 3, 2, 2}, "w");
            }).find("w: Identity needs a 2-D weight"),
            std::string::npos);
}

TEST(Initializers, ASeedGivesTheSameDrawEveryTime) {
  auto seeded = [](int64_t s) { return named({{"class_name", "HeNormal"}, {"config", {{"seed", s}}}}); };
  EXPECT_TRUE(at::equal(seeded(7).draw({20, 10}, "t"), seeded(7).draw({20, 10}, "t")));
  EXPECT_FALSE(at::equal(seeded(7).draw({20, 10}, "t"), seeded(8).draw({20, 10}, "t")));
  EXPECT_FALSE(at::equal(named("HeNormal").draw({20, 10}, "t"), named("HeNormal").draw({20, 10}, "t")));
}

TEST(Initializers, KerasSpellingsAreReadAndBadOnesRefusedNamingTheValue) {
  EXPECT_EQ(named("he_normal").class_name, "HeNormal");
  EXPECT_EQ(named(Json{{"module", "keras.initializers"},
                       {"class_name", "OrthogonalInitializer"},
                       {"config", {{"gain", 1.0}, {"seed", nullptr}}},
                       {"registered_name", nullptr}})
                .class_name,
            "Orthogonal");
  EXPECT_EQ(named("zero").class_name, "Zeros");
  EXPECT_EQ(named({{"class_name", "Identity"}, {"config", nullptr}}).to_json(),
            (Json{{"class_name", "Identity"}, {"config", Json::object()}}));
  auto error = [](const Json& spec) {
    return config_error_of([&] { Initializer::from_json(spec, "layer 'd' (Dense): kernel_initializer"); });
  };
  EXPECT_NE(error("HeNormall")
                .find("layer 'd' (Dense): kernel_initializer: unknown initializer 'HeNormall' (known: "
                      "Constant, GlorotNormal"),
            std::string::npos);
  const Json vs = {{"class_name", "VarianceScaling"}, {"config", Json::object()}};
  auto with = [&](const char* k, const Json& v) {
    Json s = vs;
    s["config"][k] = v;
    return s;
  };
  EXPECT_NE(error(with("scale", 0.0)).find("scale must be > 0"), std::string::npos);
  EXPECT_NE(error(with("mode", "fan")).find("mode must be 'fan_in', 'fan_out' or 'fan_avg', got 'fan'"),
            std::string::npos);
  EXPECT_NE(error(with("distribution", "gamma")).find("got 'gamma'"), std::string::npos);
  EXPECT_NE(error(with("stdev", 1.0)).find("VarianceScaling takes no argument 'stdev'"), std::string::npos);
  EXPECT_NE(error(with("seed", "x")).find("seed must be an integer or null"), std::string::npos);
  EXPECT_NE(error(Json{{"class_name", "RandomNormal"}, {"config", {{"stddev", -1.0}}}}).find("stddev must be >= 0"),
            std::string::npos);
  EXPECT_NE(error(Json{{"class_name", "RandomUniform"}, {"config", {{"minval", 1.0}, {"maxval", 0.0}}}})
                .find("minval must be <= maxval"),
            std::string::npos);
  EXPECT_NE(error(Json(3)).find("an initializer is a name or"), std::string::npos);
}

TEST(LayerInitializers, AConfigsInitializersAreDrawnInKerasShapes) {
  at::manual_seed(4);
  // Dense kernel (300, 200): HeNormal's stddev √(2/300); bias Ones.
  auto dense = layer_from_json({{"class_name", "Dense"},
                                {"config",
                                 {{"name", "d"},
                                  {"units", 200},
                                  {"kernel_initializer", {{"class_name", "HeNormal"}, {"config", {{"seed", nullptr}}}}},
                                  {"bias_initializer", "ones"}}}});
  dense->build({300});
  auto w = dense->keras_weights();
  expect_moments(w[0], std::sqrt(2.0 / 300), "Dense HeNormal");
  EXPECT_TRUE(at::equal(w[1], at::ones({200})));
  // Conv2D kernel Keras (3, 3, 24, 64): HeUniform's limit √(6 / (9·24)) — the fans of Keras's shape, not
  // LibTorch's (64, 24, 3, 3) (whose fans would give √(6 / 192)).
  auto conv = layer_from_json(
      {{"class_name", "Conv2D"},
       {"config", {{"name", "c"}, {"filters", 64}, {"kernel_size", {3, 3}}, {"kernel_initializer", "he_uniform"}}}});
  conv->build({12, 12, 24});
  const double limit = std::sqrt(6.0 / (9 * 24));
  const Moments m = moments_of(conv->keras_weights()[0]);
  EXPECT_LE(m.max_abs, limit);
  EXPECT_GT(m.max_abs, 0.99 * limit);
  // SimpleRNN: recurrent_initializer Identity → recurrent_kernel I.
  auto rnn = layer_from_json(
      {{"class_name", "SimpleRNN"}, {"config", {{"name", "r"}, {"units", 4}, {"recurrent_initializer", "identity"}}}});
  rnn->build({5, 3});
  EXPECT_TRUE(at::equal(rnn->keras_weights()[1], at::eye(4)));
  // Depthwise / pointwise kernels and the batch-normalization statistics take Keras's key names.
  auto sep = layer_from_json({{"class_name", "SeparableConv2D"},
                              {"config",
                               {{"name", "s"},
                                {"filters", 3},
                                {"kernel_size", 3},
                                {"depthwise_initializer", "ones"},
                                {"pointwise_initializer", {{"class_name", "Constant"}, {"config", {{"value", 0.5}}}}},
                                {"bias_initializer", "zeros"}}}});
  sep->build({6, 6, 2});
  const auto sw = sep->keras_weights();
  EXPECT_TRUE(at::equal(sw[0], at::ones({3, 3, 2, 1})));
  EXPECT_TRUE(at::equal(sw[1], at::full({1, 1, 2, 3}, 0.5)));
  auto bn = layer_from_json(
      {{"class_name", "BatchNormalization"},
       {"config",
        {{"name", "b"},
         {"gamma_initializer", {{"class_name", "Constant"}, {"config", {{"value", 0.5}}}}},
         {"moving_variance_initializer", {{"class_name", "Constant"}, {"config", {{"value", 2.0}}}}}}}});
  bn->build({4, 4, 3});
  const auto bw = bn->keras_weights();
  EXPECT_TRUE(at::equal(bw[0], at::full({3}, 0.5)));
  EXPECT_TRUE(at::equal(bw[3], at::full({3}, 2.0)));
}

TEST(LayerInitializers, ConfigRoundTripKeepsThemAndAbsentWeightsAreLeftAlone) {
  const Json spec = {{"class_name", "Dense"},
                     {"config",
                      {{"name", "d"},
                       {"units", 3},
                       {"use_bias", false},
                       {"kernel_initializer", {{"class_name", "Constant"}, {"config", {{"value", 0.5}}}}},
                       {"bias_initializer", "he_normal"}}}};  // Keras configs name it even without a bias
  auto layer = layer_from_json(spec);
  const Json c = layer->config();
  EXPECT_EQ(c.at("kernel_initializer"), (Json{{"class_name", "Constant"}, {"config", {{"value", 0.5}}}}));
  EXPECT_EQ(c.at("bias_initializer").at("class_name"), "HeNormal");
  auto again = layer_from_json(layer_to_json(*layer));
  again->build({2});
  EXPECT_TRUE(at::equal(again->keras_weights().at(0), at::full({2, 3}, 0.5)));
  EXPECT_EQ(again->keras_weights().size(), 1u);
  EXPECT_NE(config_error_of([&] {
              again->set_initializer("kernel", named("ones"));
            }).find("layer 'd' (Dense): set the initializer of 'kernel' before the layer is built"),
            std::string::npos);
}

TEST(LayerInitializers, BadInitializersAreRefusedNamingTheLayerAndKey) {
  EXPECT_NE(layer_config_error({{"class_name", "Dense"},
                                {"config", {{"name", "d"}, {"units", 3}, {"kernel_initializer", "he_normall"}}}})
                .find("layer 'd' (Dense): kernel_initializer: unknown initializer 'he_normall'"),
            std::string::npos);
  auto conv = layer_from_json(
      {{"class_name", "Conv2D"},
       {"config", {{"name", "c"}, {"filters", 2}, {"kernel_size", 3}, {"kernel_initializer", "identity"}}}});
  EXPECT_NE(config_error_of([&] {
              conv->build({5, 5, 2});
            }).find("layer 'c' (Conv2D): kernel_initializer: Identity needs a 2-D weight, got (3, 3, 2, 2)"),
            std::string::npos);
}

TEST(LayerInitializers, AKerasModelConfigGetsItsInitializers) {
  at::manual_seed(5);
  // As tf.keras 2 writes a functional model whose Conv2D says HeNormal and whose Dense says Orthogonal.
  const Json json = {
      {"class_name", "Sequential"},
      {"config",
       {{"name", "m"},
        {"layers",
         {{{"class_name", "InputLayer"}, {"config", {{"batch_input_shape", {nullptr, 16, 16, 8}}, {"name", "in"}}}},
          {{"class_name", "Conv2D"},
           {"config",
            {{"name", "conv"},
             {"filters", 128},
             {"kernel_size", {3, 3}},
             {"kernel_initializer", {{"class_name", "HeNormal"}, {"config", {{"seed", nullptr}}}}},
             {"bias_initializer", {{"class_name", "Zeros"}, {"config", Json::object()}}}}}},
          {{"class_name", "Flatten"}, {"config", {{"name", "flat"}}}},
          {{"class_name", "Dense"},
           {"config",
            {{"name", "dense"},
             {"units", 16},
             {"kernel_initializer",
              {{"class_name", "Orthogonal"}, {"config", {{"gain", 1.0}, {"seed", nullptr}}}}}}}}}}}}};
  Model model = model_from_json(json);
  expect_moments(model->get_layer("conv")->keras_weights()[0], std::sqrt(2.0 / (9 * 8)), "conv HeNormal");
  const at::Tensor k = model->get_layer("dense")->keras_weights()[0].to(at::kDouble);  // (14·14·128, 16)
  EXPECT_LT((k.t().mm(k) - at::eye(16, at::kDouble)).abs().max().item<double>(), 1e-4);
}

TEST(LayerInitializers, LstmUnitForgetBiasKeepsTheForgetGateOnesWithABiasInitializer) {
  // Keras's LSTMCell.build: bias = [bias_initializer(units), ones(units), bias_initializer(2·units)].
  auto lstm = [](bool forget, const Json& init) {
    auto l = layer_from_json(
        {{"class_name", "LSTM"},
         {"config", {{"name", "l"}, {"units", 2}, {"unit_forget_bias", forget}, {"bias_initializer", init}}}});
    l->build({3, 4});
    return l->keras_weights().at(2);
  };
  const Json half = {{"class_name", "Constant"}, {"config", {{"value", 0.5}}}};
  EXPECT_TRUE(at::equal(lstm(true, half), at::tensor({0.5f, 0.5f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f, 0.5f})));
  EXPECT_TRUE(at::equal(lstm(true, {{"class_name", "Zeros"}, {"config", Json::object()}}),
                        at::tensor({0.0f, 0.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f})));
  EXPECT_TRUE(at::equal(lstm(false, half), at::full({8}, 0.5f)));
}
