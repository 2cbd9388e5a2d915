// resumed_optimizer_options: the saved options with what a resume changes, by Keras argument name;
// check_run_optimizer: what a run of N batches cannot do with the settings given.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/training/optimizer_overrides.h>
#include <torchfit/training/optimizers.h>

using namespace torchfit;

namespace optimizer_overrides_test {

saving::CheckpointInfo saved(const OptimizerOptions& o, double lr, int64_t accumulated = 0) {
  saving::CheckpointInfo info;
  info.optimizer_features = {{"config", optimizer_config(o, lr)}, {"accumulated", accumulated}};
  return info;
}

std::string option_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const OptionError& e) {
    return e.option() + ": " + e.what();
  }
  return "no error";
}

TEST(OptimizerOverrides, OnlyTheSettingsGivenReplaceTheSavedOnes) {
  const auto info = saved(OptimizerOptions().clipnorm(1.0).weight_decay(0.01).ema_momentum(0.9).use_ema(true), 0.002);
  OptimizerOverrides ov;
  ov.given = OptimizerOptions().clipvalue(0.5).weight_decay(0.2).ema_momentum(0.5);
  ov.args = {"clipvalue"};  // one clipping, the given one: clipnorm goes
  OptimizerOptions o = resumed_optimizer_options(info, ov);
  EXPECT_EQ(o.clipnorm(), 0.0);
  EXPECT_EQ(o.clipvalue(), 0.5);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0.01);  // not given: saved
  EXPECT_DOUBLE_EQ(o.ema_momentum(), 0.9);
  EXPECT_TRUE(o.use_ema());
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.002);
  ov.args = {"weight_decay", "ema_momentum"};
  ov.learning_rate = 0.1;
  o = resumed_optimizer_options(info, ov);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0.2);
  EXPECT_DOUBLE_EQ(o.ema_momentum(), 0.5);
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.1);
  EXPECT_EQ(o.clipnorm(), 1.0);
}

TEST(OptimizerOverrides, AnotherUpdateRuleKeepsTheSavedRateClippingAndEmaUnlessItGivesItsOwnRate) {
  const auto info = saved(OptimizerOptions().clipnorm(1.0).use_ema(true).gradient_accumulation_steps(2), 0.002);
  OptimizerOverrides ov;
  ov.update_rule = OptimizerOptions::from_keras("sgd");
  OptimizerOptions o = resumed_optimizer_options(info, ov);
  EXPECT_EQ(o.name(), "sgd");
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.002);  // the rule gives no rate: the saved one
  EXPECT_EQ(o.clipnorm(), 1.0);
  EXPECT_TRUE(o.use_ema());
  EXPECT_EQ(o.gradient_accumulation_steps(), 2);
  ov.update_rule = OptimizerOptions::from_keras(
      nlohmann::json::parse(R"({"class_name": "AdamW", "config": {"learning_rate": 0.5}})"));
  o = resumed_optimizer_options(info, ov);
  EXPECT_EQ(o.name(), "adamw");
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.5);                      // its own rate
  EXPECT_EQ(o.weight_decay(), OptimizerOptions::kKerasDefault);  // another name: AdamW's own default
  ov.learning_rate = 0.1;                                        // a rate given on top of the rule: it wins
  ov.given = OptimizerOptions().weight_decay(0.3);
  ov.args = {"weight_decay"};
  o = resumed_optimizer_options(info, ov);
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.1);
  EXPECT_DOUBLE_EQ(o.weight_decay(), 0.3);
}

TEST(OptimizerOverrides, SchedulesMergeByNameOrStartFromTheSavedRate) {
  LearningRateScheduleOptions cosine;
  cosine.name("cosine").initial_learning_rate(0.01).decay_steps(4);
  const auto info = saved(OptimizerOptions().learning_rate_schedule(cosine), 0.01);
  OptimizerOverrides ov;
  LearningRateScheduleOptions given;
  given.name("cosine").decay_steps(8).warmup_steps(2);
  ov.schedule = given;
  ov.schedule_args = {"decay_steps", "warmup_steps"};
  OptimizerOptions o = resumed_optimizer_options(info, ov);
  ASSERT_TRUE(o.learning_rate_schedule());
  EXPECT_EQ(o.learning_rate_schedule()->decay_steps(), 8);
  EXPECT_EQ(o.learning_rate_schedule()->warmup_steps(), 2);
  EXPECT_EQ(o.learning_rate_schedule()->initial_learning_rate(), 0.0);  // a warm-up from 0 …
  EXPECT_EQ(o.learning_rate_schedule()->warmup_target(), 0.01);         // … to the saved rate
  // Another schedule: from the saved rate; decay_steps 0 = the run's updates: 12 batches / 1 - 0.
  LearningRateScheduleOptions exponential;
  exponential.name("exponential").decay_rate(0.5);
  ov.schedule = exponential;
  ov.schedule_args = {};
  ov.batches = 12;
  o = resumed_optimizer_options(info, ov);
  EXPECT_EQ(o.learning_rate_schedule()->name(), "exponential");
  EXPECT_EQ(o.learning_rate_schedule()->decay_steps(), 12);
  EXPECT_DOUBLE_EQ(o.learning_rate(), 0.01);
}

TEST(OptimizerOverrides, RefusalsNameTheKerasArgument) {
  LearningRateScheduleOptions piecewise;
  piecewise.name("piecewise").boundaries({2}).values({0.1, 0.01});
  OptimizerOverrides ov;
  ov.learning_rate = 0.5;
  EXPECT_EQ(option_of([&] {
              resumed_optimizer_options(saved(OptimizerOptions().learning_rate_schedule(piecewise), 0.1), ov);
            }).rfind("learning_rate: the checkpoint follows a piecewise schedule", 0),
            0u);
  OptimizerOverrides acc;
  acc.given = OptimizerOptions().gradient_accumulation_steps(2);
  acc.args = {"gradient_accumulation_steps"};
  EXPECT_EQ(option_of([&] {
              resumed_optimizer_options(saved(OptimizerOptions().gradient_accumulation_steps(4), 0.1, 3), acc);
            }),
            "gradient_accumulation_steps: the checkpoint is in the middle of an accumulation of 4 batches (3 done): "
            "resume with the saved value, not 2");
  // Between accumulations the change is taken.
  EXPECT_EQ(resumed_optimizer_options(saved(OptimizerOptions().gradient_accumulation_steps(4), 0.1, 0), acc)
                .gradient_accumulation_steps(),
            2);
  OptimizerOverrides bad;
  LearningRateScheduleOptions values;
  values.name("piecewise").boundaries({2, 3}).values({0.1});
  bad.schedule = values;
  EXPECT_EQ(option_of([&] {
              resumed_optimizer_options(saved(OptimizerOptions(), 0.1), bad);
            }).rfind("learning_rate_schedule: ", 0),
            0u);
}

TEST(OptimizerOverrides, CheckRunOptimizerNamesTheSettingARunCannotTake) {
  const auto with = [](const std::string& name) {
    LearningRateScheduleOptions s;
    s.name(name).decay_steps(4).decay_rate(0.5);
    return OptimizerOptions().learning_rate_schedule(s);
  };
  EXPECT_EQ(option_of([&] { check_run_optimizer(OptimizerOptions().gradient_accumulation_steps(9), {}, 8, false); }),
            "gradient_accumulation_steps: 9 is more than the run's 8 batches (epochs x steps per epoch): the weights "
            "would never be updated");
  EXPECT_EQ(option_of([&] { check_run_optimizer(OptimizerOptions().gradient_accumulation_steps(8), {}, 8, false); }),
            "no error");
  EXPECT_EQ(option_of([&] { check_run_optimizer(with("exponential"), {"warmup_steps"}, 8, false); }),
            "warmup_steps: the exponential schedule has no such setting (only cosine has a warm-up)");
  EXPECT_EQ(option_of([&] { check_run_optimizer(with("cosine"), {"decay_rate"}, 8, false); }),
            "decay_rate: the cosine schedule has no such setting (it belongs to another schedule)");
  EXPECT_EQ(option_of([&] {
              check_run_optimizer(with("cosine"), {"learning_rate", "alpha", "warmup_steps"}, 8, false);
            }),
            "no error");
  // Without a schedule the rate is the optimizer's: nothing to check against.
  EXPECT_EQ(option_of([&] { check_run_optimizer(OptimizerOptions(), {"learning_rate"}, 8, false); }), "no error");
  LearningRateScheduleOptions piecewise;
  piecewise.name("piecewise").boundaries({2, 4}).values({0.1, 0.01});
  const auto bad = OptimizerOptions().learning_rate_schedule(piecewise);
  EXPECT_EQ(option_of([&] { check_run_optimizer(bad, {"learning_rate"}, 8, false); }),
            "learning_rate: the piecewise schedule has no such setting (its rates are its values)");
  EXPECT_EQ(option_of([&] { check_run_optimizer(bad, {}, 8, false); }).rfind("learning_rate_schedule: ", 0), 0u);
  // A resume may give a part of a schedule: resumed_optimizer_options checks the merged one.
  EXPECT_EQ(option_of([&] { check_run_optimizer(bad, {}, 8, true); }), "no error");
}

}  // namespace optimizer_overrides_test
