// Trainer: fit end to end on tiny real files, run files, evaluate/predict, callbacks, NaN stop.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/trainer.h>

#include "support/image_tree.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;
using torchfit::testing::TempDir;

namespace {

std::vector<std::string> read_lines(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  return lines;
}

std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, sep);) out.push_back(f);
  return out;
}

using torchfit::testing::tiny_mlp;

CompileOptions categorical() { return CompileOptions().loss("categorical_crossentropy").metrics({"accuracy"}); }

}  // namespace

TEST(TensorIterator, PartialLastBatchAndEndlessPasses) {
  data::TensorIterator it(at::arange(10, at::kFloat).reshape({10, 1}), at::arange(10), 4, true, 7);
  std::vector<int64_t> sizes;
  for (int i = 0; i < 5; ++i) sizes.push_back(it.next().size());
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2, 4, 4}));
  EXPECT_EQ(it.batches_per_pass(), 3);
}

TEST(Trainer, EvaluateCountsEveryImageIncludingThePartialBatch) {
  at::manual_seed(0);
  auto x = at::randn({10, 4});
  auto y = at::one_hot(at::arange(10) % 3, 3).to(at::kFloat);
  Trainer t(tiny_mlp(), categorical());
  data::TensorIterator it(x, y, 4);
  auto logs = t.evaluate(it);
  auto probs = t.predict(x);
  const double expected_loss = -(y * probs.clamp(1e-7, 1 - 1e-7).log()).sum(1).mean().item<double>();
  const double expected_acc = probs.argmax(1).eq(y.argmax(1)).to(at::kFloat).mean().item<double>();
  EXPECT_NEAR(logs.at("loss"), expected_loss, 1e-5);
  EXPECT_NEAR(logs.at("accuracy"), expected_acc, 1e-6);
  std::vector<int64_t> idx;
  auto p = t.predict(it, 0, &idx);
  EXPECT_EQ(p.sizes().vec(), (std::vector<int64_t>{10, 3}));
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(Trainer, LearnsASeparableProblemAndReportsHistory) {
  at::manual_seed(1);
  auto x = at::randn({64, 4});
  auto labels = (x.select(1, 0) > 0).to(at::kLong);
  auto y = at::one_hot(labels, 2).to(at::kFloat);
  Trainer t(tiny_mlp(4, 2),
            CompileOptions().metrics({"categorical_accuracy"}).optimizer(OptimizerOptions().learning_rate(0.05)));
  data::TensorIterator it(x, y, 16, true, 3);
  std::ostringstream out;
  auto h = t.fit(it, FitOptions().epochs(15).verbose(0).out(&out));
  EXPECT_EQ(h.history.at("loss").size(), 15u);
  EXPECT_LT(h.last("loss"), h.history.at("loss").front());
  EXPECT_GE(h.last("categorical_accuracy"), 0.9);
  EXPECT_EQ(out.str(), "");  // verbose 0
}

TEST(Trainer, NonFiniteLossStopsNamingEpochAndStep) {
  auto x = at::randn({8, 4});
  x[5][0] = std::numeric_limits<float>::quiet_NaN();
  auto y = at::one_hot(at::arange(8) % 3, 3).to(at::kFloat);
  Trainer t(tiny_mlp(), categorical());
  data::TensorIterator it(x, y, 4);
  try {
    t.fit(it, FitOptions().epochs(1).verbose(0));
    FAIL() << "NaN loss not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("epoch 1, step 2"), std::string::npos) << e.what();
  }
}

TEST(Trainer, FailedRunIsRecordedInRunJson) {
  TempDir d;
  auto x = at::randn({8, 4});
  x[5][0] = std::numeric_limits<float>::quiet_NaN();
  auto y = at::one_hot(at::arange(8) % 3, 3).to(at::kFloat);
  Trainer t(tiny_mlp(), categorical());
  data::TensorIterator it(x, y, 4);
  EXPECT_THROW(
      t.fit(it, FitOptions().epochs(1).verbose(0).callbacks({std::make_shared<RunLogger>(RunLoggerOptions(d.str()))})),
      Error);
  std::ifstream f(d.path / "run.json");
  const auto run = nlohmann::json::parse(f);
  EXPECT_EQ(run.at("status"), "failed");
  EXPECT_NE(run.at("error").get<std::string>().find("epoch 1, step 2"), std::string::npos) << run.at("error");
  EXPECT_EQ(run.at("memory_format").at("requested"), "auto");
  EXPECT_EQ(run.at("memory_format").at("used"), "channels_last");
  EXPECT_EQ(run.at("pool_before_relu"), true);
}

TEST(Trainer, BadCompileArguments) {
  EXPECT_THROW(Trainer(tiny_mlp(), CompileOptions().loss("hinge_loss")), ConfigError);
  EXPECT_THROW(Trainer(tiny_mlp(), CompileOptions().metrics({"f1"})), ConfigError);
  EXPECT_THROW(Trainer(tiny_mlp(), CompileOptions().optimizer(OptimizerOptions().name("adagradd"))), ConfigError);
  EXPECT_THROW(Trainer(tiny_mlp(), CompileOptions().optimizer(OptimizerOptions().learning_rate(0))), ConfigError);
}

TEST(Trainer, AdamUsesKerasDefaults) {
  Trainer t(tiny_mlp(), categorical());
  auto& o = static_cast<torch::optim::AdamOptions&>(t.optimizer().param_groups()[0].options());
  EXPECT_DOUBLE_EQ(o.lr(), 1e-3);
  EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.9);
  EXPECT_DOUBLE_EQ(std::get<1>(o.betas()), 0.999);
  EXPECT_DOUBLE_EQ(o.eps(), 1e-7);
  t.set_learning_rate(0.5);
  EXPECT_DOUBLE_EQ(t.learning_rate(), 0.5);
}

TEST(Trainer, EndToEndOnImageFoldersWritesRunFilesAndCheckpoints) {
  TempDir dir("e2e");
  torchfit::testing::write_image_classes(dir.path / "train", {"bag", "trouser"}, 6, 16);
  torchfit::testing::write_image_classes(dir.path / "test", {"bag", "trouser"}, 3, 16, 9);
  data::ImageDataGenerator gen(data::ImageDataGeneratorOptions().rescale(1.0 / 255).rotation_range(10));
  data::ImageDataGenerator plain(data::ImageDataGeneratorOptions().rescale(1.0 / 255));
  auto flow = data::FlowOptions().target_size({16, 16}).batch_size(4).seed(5).workers(2).verbose(false);
  auto train = gen.flow_from_directory((dir.path / "train").string(), flow);
  auto test = plain.flow_from_directory((dir.path / "test").string(),
                                        data::FlowOptions(flow).shuffle(false).class_indices(train->class_indices()));
  at::manual_seed(2);
  Trainer t(seed_cnn(16, 2, 8), CompileOptions().metrics({"categorical_accuracy"}));
  const auto run = dir.path / "run";
  const std::string ckpt = (dir.path / "model.ckpt").string();
  auto cb = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(ckpt).class_indices(train->class_indices()));
  std::ostringstream out;
  auto h = t.fit(*train, FitOptions()
                             .epochs(2)
                             .steps_per_epoch(3)
                             .validation_data(test.get())
                             .validation_steps(0)
                             .callbacks({cb, std::make_shared<RunLogger>(RunLoggerOptions(run.string()))})
                             .out(&out)
                             .dynamic(false));
  // Progress: "Epoch 1/2", a final line per epoch, no carriage returns.
  EXPECT_NE(out.str().find("Epoch 1/2\n3/3 [==============================] - "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(" - val_categorical_accuracy: "), std::string::npos);
  EXPECT_EQ(out.str().find('\r'), std::string::npos);

  auto steps = read_lines(run / "steps.csv");
  ASSERT_EQ(steps.size(), 7u);
  EXPECT_EQ(steps[0], "epoch,step,data_ms,h2d_ms,compute_ms,step_ms,loss,categorical_accuracy");
  for (size_t i = 1; i < steps.size(); ++i) {
    auto f = split(steps[i]);
    ASSERT_EQ(f.size(), 8u);
    EXPECT_GT(std::stod(f[4]), 0.0);  // compute
    EXPECT_GT(std::stod(f[5]), 0.0);  // step
    EXPECT_GE(std::stod(f[5]), std::stod(f[2]) + std::stod(f[4]));
  }
  auto epochs = read_lines(run / "epochs.csv");
  ASSERT_EQ(epochs.size(), 3u);
  EXPECT_EQ(epochs[0],
            "epoch,loss,categorical_accuracy,val_loss,val_categorical_accuracy,seconds,ms_per_step_median,"
            "ms_per_step_p90,images_per_s,data_wait_share");
  std::ifstream rj(run / "run.json");
  auto run_json = nlohmann::json::parse(rj);
  EXPECT_EQ(run_json["status"], "completed");
  EXPECT_EQ(run_json["parameters"], t.model()->count_params());
  EXPECT_EQ(run_json["warmup"].size(), 2u);
  EXPECT_TRUE(run_json["environment"].is_object());
  EXPECT_EQ(run_json["flops_per_step"].get<int64_t>(),
            (3 * t.model()->flops_per_sample() - t.model()->layers()[0]->flops_per_sample()) * 4);

  // evaluate: the same numbers before and after a reload from the checkpoint alone.
  auto before = t.evaluate(*test);
  EXPECT_NEAR(before.at("loss"), h.last("val_loss"), 1e-5);
  saving::CheckpointInfo info;
  Model reloaded = saving::load_model(ckpt, &info);
  EXPECT_EQ(info.position.epoch, 2);
  EXPECT_EQ(info.position.train_batches, 6);
  EXPECT_EQ(info.position.val_batches, 0);
  EXPECT_EQ(info.class_indices, train->class_indices());
  auto p1 = t.model()->named_parameters();
  auto p2 = reloaded->named_parameters();
  ASSERT_EQ(p1.size(), p2.size());
  for (const auto& p : p1) EXPECT_TRUE(at::equal(p.value(), p2[p.key()])) << p.key();
  Trainer t2(reloaded, CompileOptions().metrics({"categorical_accuracy"}));
  auto after = t2.evaluate(*test);
  EXPECT_DOUBLE_EQ(before.at("loss"), after.at("loss"));
  EXPECT_DOUBLE_EQ(before.at("categorical_accuracy"), after.at("categorical_accuracy"));
  std::vector<int64_t> idx;
  auto probs = t2.predict(*test, 0, &idx);
  EXPECT_EQ(probs.sizes().vec(), (std::vector<int64_t>{6, 2}));
  EXPECT_EQ(idx.size(), 6u);
  EXPECT_TRUE(at::allclose(probs.sum(1), at::ones({6}), 1e-5, 1e-6));
}

TEST(Trainer, UnwritableRunDirFailsBeforeTraining) {
  TempDir dir("ro");
  std::ofstream(dir.path / "file") << "x";
  data::TensorIterator it(at::randn({8, 4}), at::one_hot(at::arange(8) % 3, 3).to(at::kFloat), 4);
  Trainer t(tiny_mlp(), categorical());
  try {
    t.fit(it, FitOptions().verbose(0).callbacks(
                  {std::make_shared<RunLogger>(RunLoggerOptions((dir.path / "file" / "run").string()))}));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("file/run"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(t.step_timings().empty());
}
