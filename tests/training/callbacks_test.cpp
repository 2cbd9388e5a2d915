// Callbacks with scripted epoch logs: EarlyStopping, ReduceLROnPlateau, LearningRateScheduler, CSVLogger.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/error.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/callbacks.h>
#include <torchfit/training/trainer.h>

#include "support/image_tree.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "support/tmpfs.h"

using namespace torchfit;

namespace {
Trainer make_trainer() { return Trainer(torchfit::testing::tiny_mlp(3, 2), CompileOptions()); }
}  // namespace

TEST(EarlyStopping, StopsAfterPatienceAndRestoresBestWeights) {
  auto t = make_trainer();
  EarlyStopping es(EarlyStoppingOptions().monitor("val_loss").patience(2).restore_best_weights(true));
  es.set_trainer(&t);
  es.on_train_begin({});
  at::Tensor kernel = t.model()->parameters()[0];
  const std::vector<double> losses = {1.0, 0.5, 0.6, 0.7};
  at::Tensor best;
  for (int e = 0; e < 4 && !t.stop_training; ++e) {
    {
      at::NoGradGuard g;
      kernel.fill_(static_cast<double>(e));
    }
    if (e == 1) best = kernel.detach().clone();
    es.on_epoch_end(e, {{"val_loss", losses[e]}});
  }
  EXPECT_TRUE(t.stop_training);
  EXPECT_EQ(es.stopped_epoch(), 3);
  EXPECT_TRUE(at::equal(kernel, best));
}

TEST(EarlyStopping, MissingMonitorNamesAvailableKeys) {
  auto t = make_trainer();
  EarlyStopping es(EarlyStoppingOptions().monitor("val_acc"));
  es.set_trainer(&t);
  es.on_train_begin({});
  try {
    es.on_epoch_end(0, {{"loss", 1.0}});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("val_acc"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("loss"), std::string::npos);
  }
}

TEST(ReduceLROnPlateau, ReducesByFactorAfterPatience) {
  auto t = make_trainer();
  ReduceLROnPlateau r(ReduceLROnPlateauOptions().factor(0.5).patience(2));
  r.set_trainer(&t);
  r.on_train_begin({});
  for (int e = 0; e < 3; ++e) r.on_epoch_end(e, {{"val_loss", 1.0}});
  EXPECT_DOUBLE_EQ(t.learning_rate(), 5e-4);
  EXPECT_THROW(ReduceLROnPlateau(ReduceLROnPlateauOptions().factor(1.5)), ConfigError);
}

TEST(LearningRateScheduler, SetsRateEachEpoch) {
  auto t = make_trainer();
  LearningRateScheduler s([](int epoch, double lr) { return epoch < 1 ? lr : lr * 0.1; });
  s.set_trainer(&t);
  s.on_epoch_begin(0, {});
  EXPECT_DOUBLE_EQ(t.learning_rate(), 1e-3);
  s.on_epoch_begin(1, {});
  EXPECT_DOUBLE_EQ(t.learning_rate(), 1e-4);
  LearningRateScheduler bad([](int, double) { return -1.0; });
  bad.set_trainer(&t);
  EXPECT_THROW(bad.on_epoch_begin(0, {}), ConfigError);
}

TEST(CSVLogger, WritesHeaderAndRows) {
  torchfit::testing::TempDir dir("csv");
  const auto path = (dir.path / "log.csv").string();
  CSVLogger log{CSVLoggerOptions(path)};
  log.on_train_begin({});
  log.on_epoch_end(0, {{"loss", 0.5}, {"val_loss", 0.25}});
  log.on_epoch_end(1, {{"loss", 0.125}, {"val_loss", 0.0625}});
  log.on_train_end({});
  std::ifstream f(path);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "epoch,loss,val_loss\n0,0.5,0.25\n1,0.125,0.0625\n");
  CSVLogger bad(CSVLoggerOptions((dir.path / "missing" / "x.csv").string()));
  EXPECT_THROW(bad.on_train_begin({}), IoError);
}

TEST(CSVLogger, AppendingToAFileWithRowsWritesNoSecondHeader) {
  torchfit::testing::TempDir dir("csv_append");
  const auto path = (dir.path / "log.csv").string();
  for (int run = 0; run < 2; ++run) {
    CSVLogger log{CSVLoggerOptions(path).append(true)};
    log.on_train_begin({});
    log.on_epoch_end(run, {{"loss", 0.5}});
    log.on_train_end({});
  }
  std::ifstream f(path);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "epoch,loss\n0,0.5\n1,0.5\n");
}

TEST(CallbackOptions, BadCombinationsAreConfigErrorsAtConstruction) {
  EXPECT_THROW(ModelCheckpoint(ModelCheckpointOptions("")), ConfigError);
  EXPECT_THROW(ModelCheckpoint(ModelCheckpointOptions("m.ckpt").save_best_only(true).save_freq(1)), ConfigError);
  EXPECT_THROW(ModelCheckpoint(ModelCheckpointOptions("m.ckpt").save_freq(-1)), ConfigError);
  EXPECT_THROW(EarlyStopping(EarlyStoppingOptions().patience(-1)), ConfigError);
  EXPECT_THROW(EarlyStopping(EarlyStoppingOptions().mode("largest")), ConfigError);
  torchfit::testing::TempDir dir("ckpt_dir");
  auto t = make_trainer();
  ModelCheckpoint into_folder{ModelCheckpointOptions(dir.path.string())};
  into_folder.set_trainer(&t);
  EXPECT_THROW(into_folder.on_train_begin({}), IoError) << "a folder is not a checkpoint file";
}

TEST(ModelCheckpoint, FilepathIsFormattedAsKeras) {
  const Logs logs{{"loss", 0.5}, {"val_loss", 0.12345}, {"val_categorical_accuracy", 0.875}};
  EXPECT_EQ(format_filepath("w.{epoch:02d}-{val_loss:.2f}.ckpt", 0, 3, logs), "w.01-0.12.ckpt");
  EXPECT_EQ(format_filepath("w.{epoch}.{batch}-{loss}.ckpt", 9, 3, logs), "w.10.4-0.5.ckpt");
  EXPECT_EQ(format_filepath("a{val_categorical_accuracy:.3f}{{x}}", 0, 0, logs), "a0.875{x}");
  EXPECT_EQ(format_filepath("plain.ckpt", 4, 0, logs), "plain.ckpt");
  try {
    format_filepath("w.{val_acc:.2f}.ckpt", 0, 0, logs);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("w.{val_acc:.2f}.ckpt"), std::string::npos) << what;
    EXPECT_NE(what.find("val_categorical_accuracy"), std::string::npos) << what;  // the fields available
  }
  EXPECT_THROW(format_filepath("w.{epoch:.2q}.ckpt", 0, 0, logs), ConfigError);
}

TEST(ModelCheckpoint, WritesOneFilePerFormattedNameAndReportsTheRealFile) {
  torchfit::testing::TempDir dir("ckpt_names");
  auto t = make_trainer();
  data::TensorIterator train(at::rand({8, 3}), at::one_hot(at::arange(8) % 2, 2).to(at::kFloat), 4);
  data::TensorIterator val(at::rand({4, 3}), at::one_hot(at::arange(4) % 2, 2).to(at::kFloat), 4);
  auto cb = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(dir.file("w.{epoch:02d}-{val_loss:.2f}.ckpt")));
  const History h =
      t.fit(train, FitOptions().epochs(2).validation_data(&val).validation_steps(1).verbose(0).callbacks({cb}));
  char second[64];
  std::snprintf(second, sizeof second, "w.02-%.2f.ckpt", h.history.at("val_loss").at(1));
  EXPECT_EQ(cb->last_saved(), dir.file(second));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) files += e.path().extension() == ".ckpt";
  EXPECT_EQ(files, 2);
  EXPECT_TRUE(std::filesystem::exists(cb->last_saved()));
}

// The class map a checkpoint stores comes from the training source (FitParams::class_indices); an explicit
// ModelCheckpointOptions::class_indices still wins.
TEST(ModelCheckpoint, StoresTheTrainingSourcesClassMapUnlessGivenOne) {
  torchfit::testing::TempDir dir("ckpt_classes");
  torchfit::testing::make_tree(dir.path / "train", {"cat", "dog", "emu"}, 2, 4);
  data::DirectoryIterator train(
      (dir.path / "train").string(),
      data::FlowOptions().target_size({4, 4}).batch_size(3).seed(1).workers(1).verbose(false));
  Sequential model;
  model->add(Flatten(FlattenOptions().input_shape(Shape{4, 4, 3})));
  model->add(Dense(DenseOptions(3).activation("softmax")));
  Trainer t(model, CompileOptions());
  auto from_source = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(dir.file("source.ckpt")));
  auto given = std::make_shared<ModelCheckpoint>(
      ModelCheckpointOptions(dir.file("given.ckpt")).class_indices({{"a", 0}, {"b", 1}, {"c", 2}}));
  t.fit(train, FitOptions().epochs(1).steps_per_epoch(1).verbose(0).callbacks({from_source, given}));
  const std::map<std::string, int64_t> expected = {{"cat", 0}, {"dog", 1}, {"emu", 2}};
  EXPECT_EQ(saving::read_checkpoint_info(dir.file("source.ckpt")).class_indices, expected);
  EXPECT_EQ(saving::read_checkpoint_info(dir.file("given.ckpt")).class_indices,
            (std::map<std::string, int64_t>{{"a", 0}, {"b", 1}, {"c", 2}}));
}

TEST(ModelCheckpoint, UnknownFilepathKeysAreRefusedBeforeTheFirstStep) {
  torchfit::testing::TempDir dir("ckpt_keys");
  data::TensorIterator train(at::rand({8, 3}), at::one_hot(at::arange(8) % 2, 2).to(at::kFloat), 4);
  for (const auto& [pattern, freq] : {std::pair<std::string, int64_t>{"w.{val_loss:.2f}.ckpt", 0},  // no validation
                                      {"w.{acc}.ckpt", 0},
                                      {"w.{val_loss}.ckpt", 1}}) {  // save_freq saves mid-epoch: no val_loss yet
    auto t = make_trainer();
    auto cb = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(dir.file(pattern)).save_freq(freq));
    EXPECT_THROW(t.fit(train, FitOptions().epochs(1).verbose(0).callbacks({cb})), ConfigError) << pattern;
    EXPECT_TRUE(t.step_timings().empty()) << pattern;
  }
}

TEST(CSVLogger, CellsWithTheSeparatorAreQuotedAndAFullDiskIsAnIoError) {
  torchfit::testing::TempDir dir("csv_sep");
  const auto path = (dir.path / "log.csv").string();
  CSVLogger semi{CSVLoggerOptions(path).separator(';')};
  semi.on_train_begin({});
  semi.on_epoch_end(0, {{"a;b", 0.5}, {"loss", 0.25}});
  semi.on_train_end({});
  std::ifstream f(path);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()),
            "epoch;\"a;b\";loss\n0;0.5;0.25\n");

  torchfit::testing::SmallFilesystem fs("64k");
  if (!fs.mounted()) GTEST_SKIP() << fs.why();
  CSVLogger log{CSVLoggerOptions(fs.file("log.csv"))};
  log.on_train_begin({});
  log.on_epoch_end(0, {{"loss", 0.5}});
  fs.fill();
  std::string message;
  try {
    for (int epoch = 1; epoch < 2000; ++epoch) log.on_epoch_end(epoch, {{"loss", 0.123456}});
  } catch (const IoError& e) {
    message = e.what();
  }
  EXPECT_EQ(message, "cannot write '" + fs.file("log.csv") + "': " + std::strerror(ENOSPC));
}

TEST(ModelCheckpoint, PositionalFieldsAreRefusedAndFoldersPerEpochAreMade) {
  for (const std::string pattern : {"w{}.ckpt", "w{0}.ckpt", "w{1:02d}.ckpt"}) {
    try {
      format_filepath(pattern, 0, 0, {{"loss", 0.5}});
      FAIL() << pattern;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("positional field"), std::string::npos) << e.what();
    }
  }
  torchfit::testing::TempDir dir("ckpt_folders");
  auto t = make_trainer();
  data::TensorIterator train(at::rand({8, 3}), at::one_hot(at::arange(8) % 2, 2).to(at::kFloat), 4);
  auto cb = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(dir.file("{epoch}/w.ckpt")));
  t.fit(train, FitOptions().epochs(2).verbose(0).callbacks({cb}));
  EXPECT_TRUE(std::filesystem::exists(dir.path / "1" / "w.ckpt"));
  EXPECT_TRUE(std::filesystem::exists(dir.path / "2" / "w.ckpt"));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "{epoch}")) << "no folder named after the pattern";
}
