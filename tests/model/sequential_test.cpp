// Sequential: naming, summary golden text, forward, JSON round-trip, bad input.
#include <gtest/gtest.h>

#include <sstream>

#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>

#include "support/seed_cnn.h"
#include "support/tiny_model.h"

using namespace torchfit;

namespace {
std::string pad(const std::string& s, size_t n) { return s + std::string(n - s.size(), ' '); }
std::string r(const std::string& a, const std::string& b, const std::string& c) {
  return pad(pad(a, 29) + b, 55) + pad(c, 10);
}
}  // namespace

TEST(Sequential, SeedCnnGoldenSummary) {
  auto model = torchfit::testing::seed_cnn();
  const std::string u(65, '_'), e(65, '=');
  std::string golden =
      "Model: \"sequential\"\n" + u + "\n" + r("Layer (type)", "Output Shape", "Param #") + "\n" + e + "\n";
  const std::vector<std::array<std::string, 3>> rows = {
      {"conv2d (Conv2D)", "(None, 148, 148, 32)", "896"},
      {"max_pooling2d (MaxPooling2D)", "(None, 74, 74, 32)", "0"},
      {"conv2d_1 (Conv2D)", "(None, 72, 72, 64)", "18496"},
      {"max_pooling2d_1 (MaxPooling2D)", "(None, 36, 36, 64)", "0"},
      {"flatten (Flatten)", "(None, 82944)", "0"},
      {"dense (Dense)", "(None, 512)", "42467840"},
      {"dropout (Dropout)", "(None, 512)", "0"},
      {"dense_1 (Dense)", "(None, 64)", "32832"},
      {"dropout_1 (Dropout)", "(None, 64)", "0"},
      {"dense_2 (Dense)", "(None, 8)", "520"},
  };
  for (size_t i = 0; i < rows.size(); ++i) {
    // Keras cuts a name longer than its column: "max_pooling2d_1 (MaxPooling2D)" is 30 chars → 28 + ' '.
    std::string name = rows[i][0];
    if (name.size() > 28) name = name.substr(0, 28);
    golden += r(name, rows[i][1], rows[i][2]) + "\n" + (i + 1 == rows.size() ? e : u) + "\n";
  }
  golden += "Total params: 42,520,584\nTrainable params: 42,520,584\nNon-trainable params: 0\n" + u + "\n";
  EXPECT_EQ(model->summary(), golden);
  EXPECT_EQ(model->count_params(), 42520584);
  std::ostringstream os;
  model->print_summary(os);
  EXPECT_EQ(os.str(), golden);
}

// The tests' tiny model (support/tiny_model.h): the architecture other tests rely on.
TEST(Sequential, TinyMlpSummaryParamsAndProbabilities) {
  at::manual_seed(0);
  Sequential m = torchfit::testing::tiny_mlp();
  const std::string u(65, '_'), e(65, '=');
  const std::string golden = "Model: \"sequential\"\n" + u + "\n" + r("Layer (type)", "Output Shape", "Param #") +
                             "\n" + e + "\n" + r("dense (Dense)", "(None, 8)", "40") + "\n" + u + "\n" +
                             r("dense_1 (Dense)", "(None, 3)", "27") + "\n" + e + "\n" +
                             "Total params: 67\nTrainable params: 67\nNon-trainable params: 0\n" + u + "\n";
  EXPECT_EQ(m->summary(), golden);
  EXPECT_EQ(m->output_activation(), "softmax");
  const at::Tensor y = m->forward(at::randn({5, 4}));
  ASSERT_EQ(y.sizes(), (at::IntArrayRef{5, 3}));
  EXPECT_TRUE(at::allclose(y.sum(1), at::ones({5}), 1e-5, 1e-6));
  EXPECT_EQ(torchfit::testing::tiny_mlp(10, 2)->count_params(), (10 * 8 + 8) + (8 * 2 + 2));
}

TEST(Sequential, SeedCnnForwardGivesProbabilities) {
  at::manual_seed(0);
  auto model = torchfit::testing::seed_cnn();
  model->eval();
  auto y = model->forward(at::rand({2, 3, 150, 150}));
  ASSERT_EQ(y.sizes().vec(), (std::vector<int64_t>{2, 8}));
  EXPECT_TRUE(at::allclose(y.sum(1), at::ones({2}), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(model->forward_logits(at::zeros({1, 3, 150, 150})).softmax(1),
                           model->forward(at::zeros({1, 3, 150, 150}))));
  EXPECT_EQ(model->output_activation(), "softmax");
  // 2·(27·32·148² + 288·64·72² + 82944·512 + 512·64 + 64·8) forward FLOPs per sample; a training step
  // of 32 is (3·that − conv2d's input gradient) · 32 ≈ 28.9 GFLOP.
  EXPECT_EQ(model->flops_per_sample(), 313954304);
}

TEST(Sequential, AutomaticAndUserNames) {
  Sequential m;
  m->add(Dense(DenseOptions(4).input_shape(Shape{3})));
  m->add(Dense(DenseOptions(4).name("head")));
  m->add(Dense(DenseOptions(2)));
  EXPECT_EQ(m->layers()[0]->name(), "dense");
  EXPECT_EQ(m->layers()[1]->name(), "head");
  EXPECT_EQ(m->layers()[2]->name(), "dense_1");
  EXPECT_EQ(m->get_layer("head")->count_params(), 20);
  EXPECT_THROW(m->add(Dense(DenseOptions(2).name("head"))), ConfigError);
  EXPECT_THROW(m->get_layer("nope"), ConfigError);
}

TEST(Sequential, FirstLayerNeedsInputShape) {
  Sequential m;
  try {
    m->add(Dense(DenseOptions(4)));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("input_shape"), std::string::npos);
  }
}

TEST(Sequential, JsonRoundTripRebuildsSameArchitecture) {
  auto model = torchfit::testing::seed_cnn(32, 10, 16);
  auto json = model->to_json();
  EXPECT_EQ(json["format_version"], 1);
  auto rebuilt = SequentialImpl::from_json(json);
  EXPECT_EQ(rebuilt->summary(), model->summary());
  EXPECT_EQ(rebuilt->to_json(), json);
  json["format_version"] = 99;
  EXPECT_THROW(SequentialImpl::from_json(json), ConfigError);
}

TEST(Sequential, TrainEvalAndTo) {
  auto model = torchfit::testing::seed_cnn(16, 2, 4);
  model->eval();
  for (const auto& l : model->layers()) EXPECT_FALSE(l->is_training());
  model->train();
  for (const auto& l : model->layers()) EXPECT_TRUE(l->is_training());
  model->to(at::kCPU);
  EXPECT_EQ(model->parameters()[0].device(), at::Device(at::kCPU));
}

TEST(Sequential, AnInputThatDoesNotFitIsAnErrorNamingBothShapes) {
  auto mlp = torchfit::testing::tiny_mlp(4, 3);
  try {
    mlp->forward(at::zeros({2, 5}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("(2, 5)"), std::string::npos) << what;
    EXPECT_NE(what.find("(None, 4)"), std::string::npos) << what;
  }
  auto cnn = torchfit::testing::seed_cnn(32, 2, 8);  // Keras input (32, 32, 3) ⇒ tensors (N, 3, 32, 32)
  EXPECT_EQ(cnn->forward(at::zeros({1, 3, 32, 32})).sizes(), (std::vector<int64_t>{1, 2}));
  try {
    cnn->forward(at::zeros({1, 3, 64, 64}));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("(N, 3, 32, 32)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cnn->forward(at::zeros({1, 32, 32, 3})), ConfigError) << "channels-last order is not (N, C, H, W)";
}
