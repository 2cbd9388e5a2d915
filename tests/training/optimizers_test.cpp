// OptimizerOptions' Keras arguments (args()): optimizer_config writes them with Keras's names and
// OptimizerOptions::from_config reads configs written the Keras way back into the same options (what a
// resumed run starts from); optimizer_config_changes names each setting that differs.
#include <gtest/gtest.h>

#include <torchfit/error.h>
#include <torchfit/training/lr_schedules.h>
#include <torchfit/training/optimizers.h>

using namespace torchfit;

namespace {

// `what` is thrown as a ConfigError whose message holds `part`.
template <typename F>
void expect_config_error(F&& what, const std::string& part) {
  try {
    what();
    FAIL() << "no error; expected one containing: " << part;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

}  // namespace

// A config as Keras's Adam.get_config() names it (clipping and accumulation off ⇒ null), with a
// CosineDecay written as keras.optimizers.schedules.serialize does (its own "name" included).
TEST(OptimizerOptions, FromConfigReadsKerasNamedSettings) {
  const auto config = nlohmann::json::parse(R"({
    "name": "adam", "beta_1": 0.8, "beta_2": 0.99, "epsilon": 1e-6, "momentum": 0.0, "nesterov": false,
    "rho": 0.9, "clipnorm": null, "clipvalue": 0.5, "global_clipnorm": null, "weight_decay": 0.004,
    "use_ema": true, "ema_momentum": 0.9, "gradient_accumulation_steps": 3,
    "learning_rate": {"class_name": "CosineDecay", "config": {"initial_learning_rate": 0.0, "decay_steps": 40,
      "alpha": 0.1, "warmup_target": 0.01, "warmup_steps": 5, "name": "CosineDecay"}}})");
  const OptimizerOptions o = OptimizerOptions::from_config(config);
  EXPECT_EQ(o.name(), "adam");
  EXPECT_EQ(o.beta_1(), 0.8);
  EXPECT_EQ(o.beta_2(), 0.99);
  EXPECT_EQ(o.epsilon(), 1e-6);
  EXPECT_EQ(o.clipnorm(), 0.0);  // null: off
  EXPECT_EQ(o.clipvalue(), 0.5);
  EXPECT_EQ(o.weight_decay(), 0.004);
  EXPECT_TRUE(o.use_ema());
  EXPECT_EQ(o.ema_momentum(), 0.9);
  EXPECT_EQ(o.gradient_accumulation_steps(), 3);
  EXPECT_EQ(o.learning_rate(), -1.0);  // the rate is the schedule's
  ASSERT_TRUE(o.learning_rate_schedule());
  const auto& s = *o.learning_rate_schedule();
  EXPECT_EQ(s.name(), "cosine");
  EXPECT_EQ(s.initial_learning_rate(), 0.0);
  EXPECT_EQ(s.decay_steps(), 40);
  EXPECT_EQ(s.alpha(), 0.1);
  EXPECT_EQ(s.warmup_target(), 0.01);
  EXPECT_EQ(s.warmup_steps(), 5);
  // Written back: the same JSON, key for key (the schedule without the name Keras adds), with Adam's
  // arguments only: the momentum, nesterov and rho earlier configs wrote for every optimizer (at the values
  // they wrote, so accepted) are not Adam's; amsgrad is.
  nlohmann::json expected = config;
  expected["learning_rate"]["config"].erase("name");
  for (const char* key : {"momentum", "nesterov", "rho"}) expected.erase(key);
  expected["amsgrad"] = false;
  EXPECT_EQ(optimizer_config(o, 1e-3), expected);
}

TEST(OptimizerOptions, FromConfigReadsEachScheduleAndAConstantRate) {
  const auto exponential = OptimizerOptions::from_config(nlohmann::json::parse(
      R"({"name": "sgd", "momentum": 0.9, "nesterov": true, "learning_rate": {"class_name": "ExponentialDecay",
          "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5, "staircase": true}}})"));
  EXPECT_EQ(exponential.name(), "sgd");
  EXPECT_EQ(exponential.momentum(), 0.9);
  EXPECT_TRUE(exponential.nesterov());
  ASSERT_TRUE(exponential.learning_rate_schedule());
  EXPECT_EQ(exponential.learning_rate_schedule()->name(), "exponential");
  EXPECT_EQ(exponential.learning_rate_schedule()->decay_rate(), 0.5);
  EXPECT_TRUE(exponential.learning_rate_schedule()->staircase());
  // Keras's PiecewiseConstantDecay at step 6 of boundaries [4, 8]: the second value.
  const auto piecewise = OptimizerOptions::from_config(nlohmann::json::parse(
      R"({"name": "rmsprop", "rho": 0.8, "learning_rate": {"class_name": "PiecewiseConstantDecay",
          "config": {"boundaries": [4, 8], "values": [0.01, 0.005, 0.001]}}})"));
  EXPECT_EQ(piecewise.rho(), 0.8);
  ASSERT_TRUE(piecewise.learning_rate_schedule());
  EXPECT_EQ(schedule_learning_rate(*piecewise.learning_rate_schedule(), 1.0, 6), 0.005);
  // A checkpoint's compile.optimizer: the update-rule settings and the rate, everything else default.
  const auto constant = OptimizerOptions::from_config(nlohmann::json::parse(
      R"({"name": "adam", "learning_rate": 0.0005, "beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7,
          "momentum": 0.0, "nesterov": false, "rho": 0.9})"));
  EXPECT_EQ(constant.learning_rate(), 0.0005);
  EXPECT_FALSE(constant.learning_rate_schedule());
  EXPECT_FALSE(constant.use_ema());
  EXPECT_EQ(constant.gradient_accumulation_steps(), 0);
}

TEST(OptimizerOptions, BadConfigsAreErrorsNamingTheField) {
  auto read = [](const char* text) { return [text] { OptimizerOptions::from_config(nlohmann::json::parse(text)); }; };
  expect_config_error(read(R"({"name": "adam", "clip_norm": 1.0})"), "optimizer config: unknown field 'clip_norm'");
  expect_config_error(read(R"({"name": "adam", "clipnorm": "big"})"),
                      "optimizer config: field 'clipnorm' must be a number, got \"big\"");
  expect_config_error(read(R"({"gradient_accumulation_steps": 2.5})"),
                      "field 'gradient_accumulation_steps' must be an integer");
  expect_config_error(read(R"({"use_ema": 1})"), "field 'use_ema' must be true or false");
  expect_config_error(read(R"([1, 2])"), "optimizer config: must be a JSON object");
  expect_config_error(read(R"({"learning_rate": {"class_name": "LinearDecay", "config": {}}})"),
                      "learning-rate schedule: unknown class 'LinearDecay' (known: CosineDecay, CosineDecayRestarts, "
                      "ExponentialDecay, InverseTimeDecay, PiecewiseConstantDecay, PolynomialDecay)");
  expect_config_error(read(R"({"learning_rate": {"class_name": "CosineDecay", "config": {"alpha": 0.1}}})"),
                      "learning-rate schedule CosineDecay: missing field 'decay_steps'");
  expect_config_error(
      read(R"({"learning_rate": {"class_name": "ExponentialDecay", "config": {"decay_steps": 4, "decay_rate": 0.5,
               "alpha": 0.1}}})"),
      "learning-rate schedule ExponentialDecay: unknown field 'alpha'");
}

TEST(OptimizerOptions, ConfigChangesNameEachSettingThatDiffers) {
  const auto cosine = LearningRateScheduleOptions().name("cosine").decay_steps(10).initial_learning_rate(0.0);
  const auto saved = OptimizerOptions().clipnorm(1.0).learning_rate_schedule(
      LearningRateScheduleOptions(cosine).warmup_target(0.01).warmup_steps(2));
  const auto now = OptimizerOptions().clipnorm(2.0).use_ema(true).learning_rate_schedule(
      LearningRateScheduleOptions(cosine).warmup_target(0.5).warmup_steps(2));
  EXPECT_EQ(optimizer_config_changes(optimizer_config(saved, 0.0), optimizer_config(now, 0.0)),
            "clipnorm 1.0 → 2.0, learning_rate.config.warmup_target 0.01 → 0.5, use_ema false → true");
  EXPECT_EQ(optimizer_config_changes(optimizer_config(saved, 0.0), optimizer_config(saved, 0.0)), "");
  // A constant rate is the optimizer state's (resume_learning_rate replaces it and says so): not listed.
  EXPECT_EQ(optimizer_config_changes(optimizer_config(OptimizerOptions(), 1e-3),
                                     optimizer_config(OptimizerOptions().weight_decay(0.1), 0.5)),
            "weight_decay null → 0.1");
  EXPECT_EQ(optimizer_config_changes(nullptr, nlohmann::json{{"use_ema", true}}), "(none saved) → {\"use_ema\":true}");
}

// The arguments each schedule reads are Keras's get_config keys but "name" (keras/src/optimizers/schedules/
// learning_rate_schedule.py: CosineDecay, ExponentialDecay, PiecewiseConstantDecay).
TEST(LearningRateSchedule, ArgumentsAreKerasConfigKeys) {
  using Names = std::set<std::string>;
  EXPECT_EQ(schedule_arguments("cosine"),
            (Names{"initial_learning_rate", "decay_steps", "alpha", "warmup_target", "warmup_steps"}));
  EXPECT_EQ(schedule_arguments("exponential"),
            (Names{"initial_learning_rate", "decay_steps", "decay_rate", "staircase"}));
  EXPECT_EQ(schedule_arguments("piecewise"), (Names{"boundaries", "values"}));
  EXPECT_THROW(schedule_arguments("linear"), ConfigError);
}
