#include <torchfit/io/checkpoint.h>

#include <filesystem>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/training/trainer.h>

namespace torchfit::io {
namespace {

constexpr const char* kMagic = "torchfit-checkpoint-v1";

std::string shape_text(at::IntArrayRef s) {
  std::string t = "(";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + ")";
}

nlohmann::json compile_json(const CompileOptions& c, double lr) {
  const auto& o = c.optimizer();
  return {{"loss", c.loss()},
          {"metrics", c.metrics()},
          {"optimizer",
           {{"name", o.name()},
            {"learning_rate", lr},
            {"beta_1", o.beta_1()},
            {"beta_2", o.beta_2()},
            {"epsilon", o.epsilon()},
            {"momentum", o.momentum()},
            {"nesterov", o.nesterov()},
            {"rho", o.rho()}}}};
}

void open_archive(const std::string& path, torch::serialize::InputArchive& archive) {
  if (!std::filesystem::is_regular_file(path)) throw IoError("checkpoint '" + path + "' does not exist");
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));  // LibTorch appends its C++ stack after the first line
    throw IoError("checkpoint '" + path + "' cannot be read (truncated or not a torchfit checkpoint): " + why);
  }
}

CheckpointInfo read_info(const std::string& path, torch::serialize::InputArchive& archive) {
  c10::IValue meta;
  if (!archive.try_read("torchfit", meta) || !meta.isString()) {
    throw IoError("'" + path + "' is not a torchfit checkpoint (no metadata)");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(meta.toStringRef());
  } catch (const std::exception& e) {
    throw IoError("checkpoint '" + path + "': corrupt metadata: " + e.what());
  }
  if (j.value("magic", "") != kMagic) throw IoError("'" + path + "' is not a torchfit checkpoint (bad magic)");
  CheckpointInfo info;
  info.model_config = j.at("model");
  info.compile = j.value("compile", nlohmann::json::object());
  info.class_indices = j.value("class_indices", std::map<std::string, int64_t>{});
  const auto pos = j.value("position", nlohmann::json::object());
  info.position.epoch = pos.value("epoch", 0);
  info.position.step = pos.value("step", int64_t{0});
  info.position.train_batches = pos.value("train_batches", int64_t{0});
  info.position.val_batches = pos.value("val_batches", int64_t{0});
  info.torchfit_version = j.value("torchfit_version", "");
  return info;
}

void copy_weights(const std::string& path, torch::serialize::InputArchive& archive, SequentialImpl& model) {
  torch::serialize::InputArchive weights;
  if (!archive.try_read("weights", weights)) throw IoError("checkpoint '" + path + "' has no weights");
  at::NoGradGuard no_grad;
  for (auto& p : model.named_parameters(true)) {
    at::Tensor t;
    if (!weights.try_read(p.key(), t)) {
      throw ConfigError("checkpoint '" + path + "' has no parameter '" + p.key() + "'");
    }
    if (t.sizes() != p.value().sizes()) {
      throw ConfigError("checkpoint '" + path + "': parameter '" + p.key() + "' has shape " + shape_text(t.sizes()) +
                        " but the model expects " + shape_text(p.value().sizes()));
    }
    p.value().copy_(t);
  }
}

}  // namespace

void save_checkpoint(const std::string& path, Trainer& trainer, const std::map<std::string, int64_t>& class_indices) {
  const auto& pos = trainer.position();
  torch::serialize::OutputArchive archive;
  nlohmann::json meta = {{"magic", kMagic},
                         {"torchfit_version", TORCHFIT_VERSION},
                         {"model", trainer.model()->to_json()},
                         {"compile", compile_json(trainer.compile_options(), trainer.learning_rate())},
                         {"class_indices", class_indices},
                         {"position",
                          {{"epoch", pos.epoch},
                           {"step", pos.step},
                           {"train_batches", pos.train_batches},
                           {"val_batches", pos.val_batches}}}};
  archive.write("torchfit", c10::IValue(meta.dump()));
  torch::serialize::OutputArchive weights;
  for (const auto& p : trainer.model()->named_parameters(true)) weights.write(p.key(), p.value().detach().cpu());
  archive.write("weights", weights);
  torch::serialize::OutputArchive optim;
  trainer.optimizer().save(optim);
  archive.write("optimizer", optim);
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    archive.write("rng_cpu", gen.get_state());
  }
  write_atomically(path, [&](const std::string& tmp) { archive.save_to(tmp); });
}

CheckpointInfo read_checkpoint_info(const std::string& path) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive);
  return read_info(path, archive);
}

Sequential load_model(const std::string& path, CheckpointInfo* info_out) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive);
  CheckpointInfo info = read_info(path, archive);
  Sequential model(SequentialImpl::from_json(info.model_config));
  copy_weights(path, archive, *model);
  if (info_out) *info_out = info;
  return model;
}

void load_weights(const std::string& path, SequentialImpl& model) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive);
  read_info(path, archive);
  copy_weights(path, archive, model);
}

CheckpointInfo load_checkpoint(const std::string& path, Trainer& trainer, bool load_optimizer) {
  torch::serialize::InputArchive archive;
  open_archive(path, archive);
  CheckpointInfo info = read_info(path, archive);
  copy_weights(path, archive, *trainer.model());
  if (load_optimizer) {
    const auto saved = info.compile.value("optimizer", nlohmann::json::object()).value("name", "");
    if (saved == trainer.compile_options().optimizer().name()) {
      torch::serialize::InputArchive optim;
      if (archive.try_read("optimizer", optim)) {
        try {
          trainer.optimizer().load(optim);
        } catch (const std::exception& e) {
          std::string why = e.what();
          throw IoError("checkpoint '" + path + "': optimizer state does not fit this model: " +
                        why.substr(0, why.find('\n')));
        }
      }
      trainer.set_learning_rate(info.compile["optimizer"].value("learning_rate", trainer.learning_rate()));
    }
  }
  at::Tensor rng;
  if (archive.try_read("rng_cpu", rng)) {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_state(rng);
  }
  trainer.set_position(info.position);
  return info;
}

}  // namespace torchfit::io
