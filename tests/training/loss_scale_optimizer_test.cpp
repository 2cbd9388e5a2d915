// Dynamic loss scaling (Keras LossScaleOptimizer semantics): an injected inf gradient skips the step,
// halves the scale and leaves the weights alone; the scale doubles after N finite steps; a power-of-two
// scale changes nothing in float32; the state survives a checkpoint; bad settings are refused.
#include <gtest/gtest.h>

#include <limits>

#include <torchfit/error.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"

using namespace torchfit;

namespace {

std::unique_ptr<Trainer> scaled_trainer(int64_t growth_steps, double initial = 32768.0) {
  at::manual_seed(3);
  return std::make_unique<Trainer>(
      seed_cnn(16, 3, 8),
      CompileOptions().loss_scale(LossScaleOptions().initial_scale(initial).dynamic_growth_steps(growth_steps)));
}

struct Batch {
  at::Tensor x = at::rand({4, 3, 16, 16}, at::make_generator<at::CPUGeneratorImpl>(9));
  at::Tensor y = at::one_hot(at::arange(4) % 3, 3).to(at::kFloat);
};

std::vector<at::Tensor> weights_of(Trainer& t) {
  std::vector<at::Tensor> w;
  for (const auto& p : t.model()->parameters()) w.push_back(p.detach().clone());
  return w;
}

bool same_weights(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!at::equal(a[i], b[i])) return false;
  return true;
}

// The first parameter's gradient is replaced by inf while the hook is registered.
struct InfGradient {
  at::Tensor param;
  unsigned handle;
  explicit InfGradient(Trainer& t) : param(t.model()->parameters().front()) {
    handle = param.register_hook(
        [](const at::Tensor& g) { return at::full_like(g, std::numeric_limits<float>::infinity()); });
  }
  ~InfGradient() { param.remove_hook(handle); }
};

}  // namespace

TEST(LossScaleOptimizer, AnInfGradientSkipsTheStepHalvesTheScaleAndLeavesTheWeights) {
  auto t = scaled_trainer(3);
  Batch b;
  ASSERT_NE(t->loss_scale_optimizer(), nullptr);
  EXPECT_EQ(t->loss_scale_optimizer()->loss_scale(), 32768.0);
  t->train_step(b.x, b.y);  // one finite step first: the optimizer has state to keep unchanged too
  const auto before = weights_of(*t);
  const auto adam_state = t->optimizer().state().size();
  {
    InfGradient inf(*t);
    t->train_step(b.x, b.y);
  }
  EXPECT_TRUE(same_weights(before, weights_of(*t)));
  EXPECT_EQ(t->optimizer().state().size(), adam_state);
  EXPECT_EQ(t->loss_scale_optimizer()->loss_scale(), 16384.0);
  EXPECT_EQ(t->loss_scale_optimizer()->skipped_steps(), 1);
  EXPECT_EQ(t->loss_scale_optimizer()->good_steps(), 0);
  t->train_step(b.x, b.y);
  EXPECT_FALSE(same_weights(before, weights_of(*t)));  // finite again: the step is taken
}

TEST(LossScaleOptimizer, TheScaleDoublesAfterGrowthStepsFiniteStepsInARow) {
  auto t = scaled_trainer(3, 1024.0);
  Batch b;
  auto* s = t->loss_scale_optimizer();
  t->train_step(b.x, b.y);
  t->train_step(b.x, b.y);
  EXPECT_EQ(s->loss_scale(), 1024.0);
  EXPECT_EQ(s->good_steps(), 2);
  t->train_step(b.x, b.y);
  EXPECT_EQ(s->loss_scale(), 2048.0);
  EXPECT_EQ(s->good_steps(), 0);
  {  // a skipped step restarts the count
    InfGradient inf(*t);
    t->train_step(b.x, b.y);
  }
  t->train_step(b.x, b.y);
  t->train_step(b.x, b.y);
  EXPECT_EQ(s->loss_scale(), 1024.0);
  EXPECT_EQ(s->good_steps(), 2);
}

TEST(LossScaleOptimizer, NeverFallsBelowOneAsKeras) {
  auto t = scaled_trainer(5, 2.0);
  Batch b;
  InfGradient inf(*t);
  for (int i = 0; i < 3; ++i) t->train_step(b.x, b.y);
  EXPECT_EQ(t->loss_scale_optimizer()->loss_scale(), 1.0);
  EXPECT_EQ(t->loss_scale_optimizer()->skipped_steps(), 3);
}

TEST(LossScaleOptimizer, APowerOfTwoScaleGivesTheSameFloat32WeightsAsNoScaling) {
  Batch b;
  auto scaled = scaled_trainer(2000);  // seeds the global generator: the same weights and dropout stream
  for (int i = 0; i < 4; ++i) scaled->train_step(b.x, b.y);
  at::manual_seed(3);
  Trainer plain(seed_cnn(16, 3, 8), CompileOptions());
  EXPECT_EQ(plain.loss_scale_optimizer(), nullptr);  // float32 policy, no loss_scale: none
  for (int i = 0; i < 4; ++i) plain.train_step(b.x, b.y);
  EXPECT_TRUE(same_weights(weights_of(*scaled), weights_of(plain)));
}

TEST(LossScaleOptimizer, TheStateIsSavedAndRestoredByCheckpoints) {
  torchfit::testing::TempDir dir("loss_scale");
  auto t = scaled_trainer(3);
  Batch b;
  t->train_step(b.x, b.y);
  {
    InfGradient inf(*t);
    t->train_step(b.x, b.y);
  }
  t->train_step(b.x, b.y);
  const std::string path = (dir.path / "m.ckpt").string();
  t->save_checkpoint(path);
  EXPECT_EQ(saving::read_checkpoint_info(path).loss_scale,
            nlohmann::json({{"loss_scale", 16384.0}, {"good_steps", 1}, {"skipped_steps", 1}}));
  // Both go on alike (the checkpoint restores the dropout stream too): two more finite steps double the
  // scale on each.
  auto two_steps = [&](Trainer& x) {
    x.train_step(b.x, b.y);
    x.train_step(b.x, b.y);
    EXPECT_EQ(x.loss_scale_optimizer()->loss_scale(), 32768.0);
  };
  two_steps(*t);
  auto resumed = scaled_trainer(3);
  resumed->load_checkpoint(path);
  EXPECT_EQ(resumed->loss_scale_optimizer()->state(),
            nlohmann::json({{"loss_scale", 16384.0}, {"good_steps", 1}, {"skipped_steps", 1}}));
  two_steps(*resumed);
  EXPECT_TRUE(same_weights(weights_of(*t), weights_of(*resumed)));
}

TEST(LossScaleOptimizer, BadSettingsAndStatesAreRefusedNamingTheValue) {
  for (double bad : {0.5, 0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    EXPECT_THROW(scaled_trainer(10, bad), ConfigError) << bad;
  }
  try {
    scaled_trainer(0);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dynamic_growth_steps must be >= 1, got 0"), std::string::npos) << e.what();
  }
  auto t = scaled_trainer(3);
  EXPECT_THROW(t->loss_scale_optimizer()->load_state({{"loss_scale", 8.0}}), ConfigError);
  EXPECT_THROW(t->loss_scale_optimizer()->load_state({{"loss_scale", 0.25}, {"good_steps", 0}, {"skipped_steps", 0}}),
               ConfigError);
  EXPECT_THROW(t->loss_scale_optimizer()->load_state({{"loss_scale", 8.0}, {"good_steps", -5}, {"skipped_steps", 0}}),
               ConfigError);
  EXPECT_THROW(t->loss_scale_optimizer()->load_state({{"loss_scale", 8.0}, {"good_steps", 1.5}, {"skipped_steps", 0}}),
               ConfigError);
}

TEST(LossScaleOptimizer, AFixedScaleStillSkipsNonFiniteSteps) {
  at::manual_seed(3);
  Trainer t(seed_cnn(16, 3, 8), CompileOptions().loss_scale(LossScaleOptions().dynamic(false).initial_scale(128)));
  Batch b;
  const auto before = weights_of(t);
  {
    InfGradient inf(t);
    t.train_step(b.x, b.y);
  }
  EXPECT_TRUE(same_weights(before, weights_of(t)));
  EXPECT_EQ(t.loss_scale_optimizer()->loss_scale(), 128.0);
  EXPECT_EQ(t.loss_scale_optimizer()->skipped_steps(), 1);
}
