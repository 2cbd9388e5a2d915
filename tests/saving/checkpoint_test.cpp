// Checkpoints: round trip, bad files and mismatched shapes.
#include <gtest/gtest.h>

#include <fstream>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/trainer.h>

#include "support/temp_dir.h"
#include "support/tiny_model.h"

using namespace torchfit;
using torchfit::testing::TempDir;

TEST(Checkpoint, RoundTripRestoresEveryParameterAndOptimizerState) {
  TempDir dir("ckpt");
  at::manual_seed(4);
  Trainer t(seed_cnn(16, 3, 8), CompileOptions().metrics({"accuracy"}));
  auto x = at::rand({4, 3, 16, 16});
  auto y = at::one_hot(at::arange(4) % 3, 3).to(at::kFloat);
  t.train_step(x, y);
  const std::string path = (dir.path / "m.ckpt").string();
  t.set_position({3, 7, 120, 30});
  t.save_checkpoint(path, {{"a", 0}, {"b", 1}, {"c", 2}});
  auto info = saving::read_checkpoint_info(path);
  EXPECT_EQ(info.position.epoch, 3);
  EXPECT_EQ(info.position.step, 7);
  EXPECT_EQ(info.position.train_batches, 120);
  EXPECT_EQ(info.position.val_batches, 30);
  EXPECT_EQ(info.class_indices.at("c"), 2);
  EXPECT_EQ(info.torchfit_version, TORCHFIT_VERSION);

  // A fresh trainer resumed from the checkpoint takes the identical next step.
  at::manual_seed(99);
  Trainer t2(seed_cnn(16, 3, 8), CompileOptions().metrics({"accuracy"}));
  t2.load_checkpoint(path);
  t.model()->eval();
  t2.model()->eval();  // no dropout randomness
  const double l1 = t.train_step(x, y);
  const double l2 = t2.train_step(x, y);
  EXPECT_DOUBLE_EQ(l1, l2);
  auto a = t.model()->named_parameters();
  auto b = t2.model()->named_parameters();
  for (const auto& p : a) EXPECT_TRUE(at::allclose(p.value(), b[p.key()], 0, 1e-7)) << p.key();
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(Checkpoint, MismatchedShapeNamesParameterAndBothShapes) {
  TempDir dir("ckpt2");
  Trainer t(seed_cnn(16, 3, 8), CompileOptions());
  const std::string path = (dir.path / "m.ckpt").string();
  t.save_checkpoint(path);
  auto other = seed_cnn(16, 3, 4);
  try {
    saving::load_weights(path, *other);
    FAIL();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("dense_1.kernel"), std::string::npos) << m;
    EXPECT_NE(m.find("(8, 512)"), std::string::npos) << m;
    EXPECT_NE(m.find("(4, 512)"), std::string::npos) << m;
  }
}

TEST(Checkpoint, MissingTruncatedAndForeignFilesAreClearErrors) {
  TempDir dir("ckpt3");
  EXPECT_THROW(saving::load_model((dir.path / "none.ckpt").string()), IoError);
  Trainer t(seed_cnn(16, 2, 4), CompileOptions());
  const std::string path = (dir.path / "m.ckpt").string();
  t.save_checkpoint(path);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::copy_file(path, dir.path / "cut.ckpt");
  std::filesystem::resize_file(dir.path / "cut.ckpt", size / 2);
  EXPECT_THROW(saving::load_model((dir.path / "cut.ckpt").string()), IoError);
  std::ofstream(dir.path / "text.ckpt") << "hello";
  try {
    saving::load_model((dir.path / "text.ckpt").string());
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("text.ckpt"), std::string::npos);
  }
}

namespace {
// `path` with every `from` replaced by `to` (same length: the archive's offsets stay valid; LibTorch's
// reader does not check the records' CRC), written to `out`.
void rewrite_bytes(const std::string& path, const std::string& out, const std::string& from, const std::string& to) {
  ASSERT_EQ(from.size(), to.size());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t n = 0;
  for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + 1), ++n)
    bytes.replace(at, from.size(), to);
  ASSERT_GT(n, 0u) << "'" << from << "' not in " << path;
  std::ofstream(out, std::ios::binary) << bytes;
}

std::string checkpoint_load_error(const std::string& path) {
  try {
    saving::load_model(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// Issue 26: a checkpoint states its format and the torchfit that wrote it; a newer format says so.
TEST(Checkpoint, ANewerFormatOrAnUnknownLayerNamesTheWritingVersionAndTheFile) {
  TempDir dir("ckpt_version");
  Trainer t(torchfit::testing::tiny_mlp(), CompileOptions());
  const std::string path = dir.file("m.ckpt");
  t.save_checkpoint(path);
  const saving::CheckpointInfo info = saving::read_checkpoint_info(path);
  EXPECT_EQ(info.format_version, 2);
  EXPECT_EQ(info.torchfit_version, TORCHFIT_VERSION);
  const std::string version = TORCHFIT_VERSION, future(version.size(), '9');  // "0.1.0" -> "99999"
  rewrite_bytes(path, dir.file("v2.ckpt"), "\"format_version\":2", "\"format_version\":3");
  rewrite_bytes(dir.file("v2.ckpt"), dir.file("v2.ckpt"), "\"" + version + "\"", "\"" + future + "\"");
  const std::string newer = checkpoint_load_error(dir.file("v2.ckpt"));
  EXPECT_NE(newer.find("'" + dir.file("v2.ckpt") + "'"), std::string::npos) << newer;
  EXPECT_NE(newer.find("written by torchfit " + future + ", checkpoint format 3; this torchfit (" + version +
                       ") reads format 2 — upgrade"),
            std::string::npos)
      << newer;
  rewrite_bytes(path, dir.file("magic.ckpt"), "torchfit-checkpoint-v2", "torchfit-checkpoint-v4");
  EXPECT_NE(checkpoint_load_error(dir.file("magic.ckpt")).find("checkpoint format 4"), std::string::npos)
      << "a newer magic alone is a newer format, not 'bad magic'";
  rewrite_bytes(path, dir.file("layer.ckpt"), "\"Dense\"", "\"Dunse\"");
  const std::string unknown = checkpoint_load_error(dir.file("layer.ckpt"));
  for (const std::string& part : {"'" + dir.file("layer.ckpt") + "'", "written by torchfit " + version,
                                  std::string("unknown layer class 'Dunse'"), std::string("config.layers[0]")})
    EXPECT_NE(unknown.find(part), std::string::npos) << part << " in: " << unknown;
}

// Issue 37 item 0: format 2 flattens in Keras's (H, W, C) order; a format-1 checkpoint (written when
// Flatten gave (C, H, W)) loads with its Flattens in that order, so it predicts what it predicted.
TEST(Checkpoint, Format1FlattenKeepsTheChannelsFirstOrderItWasTrainedWith) {
  TempDir dir("ckpt_flatten");
  Sequential m;
  m->add(Flatten(FlattenOptions().input_shape(Shape{2, 3, 4})));  // Keras (H, W, C); tensor (N, 4, 2, 3)
  m->add(Dense(DenseOptions(5)));
  Trainer t(m, CompileOptions().loss("mean_squared_error"));
  const std::string path = dir.file("new.ckpt");
  t.save_checkpoint(path);
  rewrite_bytes(path, dir.file("old.ckpt"), "\"format_version\":2", "\"format_version\":1");
  rewrite_bytes(dir.file("old.ckpt"), dir.file("old.ckpt"), "torchfit-checkpoint-v2", "torchfit-checkpoint-v1");
  at::manual_seed(3);
  const at::Tensor x = at::rand({2, 4, 2, 3});
  const auto& dense = dynamic_cast<DenseImpl&>(*m->layers().back());
  // References from plain ATen: Keras's order (N, H, W, C) flattened, and the old (N, C, H, W) one.
  const at::Tensor keras = at::linear(x.permute({0, 2, 3, 1}).reshape({2, 24}), dense.kernel, dense.bias);
  const at::Tensor old = at::linear(x.reshape({2, 24}), dense.kernel, dense.bias);
  ASSERT_GT((keras - old).abs().max().item<double>(), 1e-3);
  torch::NoGradGuard no_grad;
  Model fresh = saving::load_model(path), legacy = saving::load_model(dir.file("old.ckpt"));
  EXPECT_TRUE(at::allclose(fresh->forward(x), keras, 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(legacy->forward(x), old, 1e-6, 1e-6));
  const std::string old_config = saving::read_checkpoint_info(dir.file("old.ckpt")).model_config.dump();
  EXPECT_NE(old_config.find("\"element_order\":\"channels_first\""), std::string::npos) << old_config;
}
