// Tests of apps/common/cli.cpp's shared flags and parsed_arguments (run.json's "arguments"): values as
// given on a command line written here, defaults, types, and the one check each shared flag carries.
#include <gtest/gtest.h>

#if TORCHFIT_TEST_APP_COMMON
#include <string>
#include <vector>

#include "../../apps/common/cli.h"

namespace {

// Parses `args` (without the program name); returns CLI11's exit code (0 = parsed).
int parse(CLI::App& app, std::vector<std::string> args) {
  std::vector<char*> argv = {const_cast<char*>("app")};
  for (auto& a : args) argv.push_back(a.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return e.get_exit_code();
  }
  return 0;
}

}  // namespace

TEST(AppsCli, ParsedArgumentsAreTheCommandLineWithDefaultsAndTypes) {
  CLI::App app{"test"};
  int64_t batch = 32;
  std::string device = "auto", data = "./data", none;
  int threads = 0;
  double lr = 1e-3;
  bool no_augment = false, cache = false;
  std::vector<int64_t> sizes = {500};
  torchfit::apps::add_batch_size_flag(app, batch);
  torchfit::apps::add_device_flag(app, device);
  torchfit::apps::add_threads_flag(app, threads);
  app.add_option("--data", data)->capture_default_str();
  app.add_option("--lr", lr)->capture_default_str();
  app.add_option("--resume", none);
  app.add_option("--sizes", sizes)->capture_default_str();
  app.add_flag("--no-augment", no_augment);
  app.add_flag("--cache", cache);
  ASSERT_EQ(
      parse(app, {"--batch-size", "8", "--device", "cpu", "--lr", "0.5", "--no-augment", "--sizes", "128", "256"}), 0);
  const nlohmann::json expected = {{"batch_size", 8},     {"device", "cpu"},    {"threads", 0},
                                   {"data", "./data"},    {"lr", 0.5},          {"resume", nullptr},
                                   {"sizes", {128, 256}}, {"no_augment", true}, {"cache", false}};
  EXPECT_EQ(torchfit::apps::parsed_arguments(app), expected) << torchfit::apps::parsed_arguments(app).dump();
}

TEST(AppsCli, SharedFlagsCarryTheirCheck) {
  {
    CLI::App app{"test"};
    std::string device = "cpu";
    torchfit::apps::add_device_flag(app, device);
    EXPECT_NE(parse(app, {"--device", "gpu"}), 0) << "a device spelling LibTorch does not know";
    EXPECT_EQ(parse(app, {"--device", "cuda:1"}), 0) << "a valid spelling; a missing device is a run error";
  }
  {
    CLI::App app{"test"};
    int64_t batch = 32;
    torchfit::apps::add_batch_size_flag(app, batch);
    EXPECT_NE(parse(app, {"--batch-size", "0"}), 0);
  }
  {
    CLI::App app{"test"};
    std::string policy;
    torchfit::apps::add_mixed_precision_flag(app, policy, "policy");
    EXPECT_NE(parse(app, {"--mixed-precision", "float16"}), 0);
    EXPECT_EQ(parse(app, {"--mixed-precision", "mixed_bfloat16"}), 0);
    EXPECT_EQ(policy, "mixed_bfloat16");
  }
}

TEST(AppsCli, CommaItemsKeepJsonItemsWhole) {
  using torchfit::apps::comma_items;
  const std::vector<std::string> want = {"accuracy",
                                         R"({"class_name": "Precision", "config": {"thresholds": [0.3, 0.5]}})",
                                         R"({"class_name": "AUC", "config": {"name": "a,b"}})", "auc"};
  EXPECT_EQ(comma_items(want[0] + ", " + want[1] + "," + want[2] + " ,auc", "--metrics", true), want);
  EXPECT_EQ(comma_items("a,,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_THROW(comma_items("a,,b", "--metrics", true), torchfit::apps::UsageError);
}
#else
TEST(AppsCli, NeedTheApps) { GTEST_SKIP() << "built without the apps (TORCHFIT_BUILD_APPS=OFF)"; }
#endif
