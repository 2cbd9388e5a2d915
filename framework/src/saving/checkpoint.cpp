#include <torchfit/saving/checkpoint.h>

#include <algorithm>
#include <filesystem>

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/model/model_json.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>

namespace torchfit::saving {
namespace {

// A checkpoint's metadata names its format: "magic" (the format family; "torchfit-checkpoint-v<N>") and
// "format_version" N, plus "torchfit_version", the release that wrote it. This torchfit writes and reads
// format kFormatVersion; a newer one is refused with the writer's version and an upgrade hint.
// Format 2: Flatten gives Keras's (H, W, C) order; format 1 flattened (C, H, W), so its Flattens are read
// with element_order "channels_first" and compute what they did when they were saved.
constexpr int kFormatVersion = 2;
constexpr const char* kMagic = "torchfit-checkpoint-v2";
constexpr const char* kMagicFamily = "torchfit-checkpoint-v";

// "written by torchfit X, checkpoint format N" for messages ("an unknown torchfit" when not recorded).
std::string writer_text(const nlohmann::json& j, int format) {
  const auto version = j.contains("torchfit_version") && j["torchfit_version"].is_string()
                           ? j["torchfit_version"].get<std::string>()
                           : std::string();
  return "written by " + (version.empty() ? std::string("an unknown torchfit") : "torchfit " + version) +
         ", checkpoint format " + std::to_string(format);
}

// Every Flatten in a model config (nested models too) keeps the (C, H, W) order of checkpoint format 1.
void keep_channels_first_flatten(nlohmann::json& j) {
  if (j.is_object() && j.value("class_name", "") == "Flatten" && j.contains("config") && j["config"].is_object()) {
    j["config"]["element_order"] = "channels_first";
  }
  if (j.is_structured()) {
    for (auto& v : j) keep_channels_first_flatten(v);
  }
}

// The format of the metadata `j` (from "format_version", else the magic's number); throws IoError for a
// foreign file or a format newer than this torchfit reads.
int check_format(const std::string& path, const nlohmann::json& j) {
  const std::string magic =
      j.is_object() && j.contains("magic") && j["magic"].is_string() ? j["magic"].get<std::string>() : "";
  if (magic.rfind(kMagicFamily, 0) != 0) throw IoError("'" + path + "' is not a torchfit checkpoint (bad magic)");
  if (j.contains("format_version") && !j["format_version"].is_number_integer()) {
    throw IoError("'" + path + "': field format_version is " + j["format_version"].dump() +
                  ", not a whole number (a damaged or foreign checkpoint)");
  }
  int format = std::atoi(magic.c_str() + std::char_traits<char>::length(kMagicFamily));
  if (j.contains("format_version") && j["format_version"].is_number_integer())
    format = std::max(format, j["format_version"].get<int>());
  if (format > kFormatVersion) {
    throw IoError("checkpoint '" + path + "' was " + writer_text(j, format) + "; this torchfit (" + TORCHFIT_VERSION +
                  ") reads format " + std::to_string(kFormatVersion) + " — upgrade torchfit to read it");
  }
  if (format < 1) throw IoError("'" + path + "' is not a torchfit checkpoint (bad format_version)");
  return format;
}

nlohmann::json compile_json(const CompileOptions& c, double lr) {
  nlohmann::json j = {
      {"loss", c.loss()}, {"metrics", c.metrics()}, {"optimizer", optimizer_hyperparameters(c.optimizer(), lr)}};
  // A model with several outputs: its per-output settings as given (training/compiled_outputs.h).
  if (!c.output_losses().is_null()) j["output_losses"] = c.output_losses();
  if (!c.loss_weights().is_null()) j["loss_weights"] = c.loss_weights();
  if (!c.output_metrics().is_null()) j["output_metrics"] = c.output_metrics();
  if (!c.weighted_metrics().is_null()) j["weighted_metrics"] = c.weighted_metrics();
  return j;
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
  const int format = check_format(path, j);
  CheckpointInfo info;
  info.format_version = format;
  info.model_config = j.at("model");
  if (format < 2) keep_channels_first_flatten(info.model_config);
  info.compile = j.value("compile", nlohmann::json::object());
  info.class_indices = j.value("class_indices", std::map<std::string, int64_t>{});
  const auto pos = j.value("position", nlohmann::json::object());
  info.position.epoch = pos.value("epoch", 0);
  info.position.step = pos.value("step", int64_t{0});
  info.position.train_batches = pos.value("train_batches", int64_t{0});
  info.position.val_batches = pos.value("val_batches", int64_t{0});
  info.position.batch_size = pos.value("batch_size", int64_t{0});
  info.position.train_samples = pos.value("train_samples", int64_t{0});
  info.position.data = pos.value("data", std::map<std::string, std::string>{});
  if (j.contains("loss_scale")) info.loss_scale = j["loss_scale"];
  if (j.contains("optimizer_features")) info.optimizer_features = j["optimizer_features"];
  info.class_weight = j.value("class_weight", std::vector<double>{});
  info.input_size = j.value("input_size", nlohmann::json());
  info.preprocessing = j.value("preprocessing", nlohmann::json());
  info.torchfit_version = j.value("torchfit_version", "");
  return info;
}

// The checkpoint's model; a config this torchfit cannot build (an unknown layer class, a field it does not
// know) is a ConfigError naming the file and the version that wrote it.
Model model_from_checkpoint(const std::string& path, const CheckpointInfo& info) {
  try {
    std::optional<InputSize> size;
    if (info.input_size.is_array()) size = info.input_size.get<InputSize>();
    return model_from_config(info.model_config, size);  // torchfit's own JSON: no Keras translation
  } catch (const std::exception& e) {
    const std::string by = info.torchfit_version.empty() ? "an unknown torchfit" : "torchfit " + info.torchfit_version;
    throw ConfigError("checkpoint '" + path + "' (written by " + by + ", checkpoint format " +
                      std::to_string(info.format_version) + "; this is torchfit " + TORCHFIT_VERSION +
                      "): " + e.what());
  }
}

// The bytes `t`'s sizes and strides reach in its storage: the file declares those, its storage is what it holds.
int64_t bytes_reached(const at::Tensor& t) {
  if (t.numel() == 0) return 0;
  int64_t last = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  return (last + 1) * static_cast<int64_t>(t.element_size());
}

// Throws the IoError of a tensor `key` whose declared shape reaches past what the file stores for it
// (LibTorch's reader does not check; copying it would read past its storage).
void check_storage(const std::string& path, const std::string& key, const at::Tensor& t) {
  if (!t.has_storage() || bytes_reached(t) <= static_cast<int64_t>(t.storage().nbytes())) return;
  throw IoError("checkpoint '" + path + "': tensor '" + key + "' declares shape " + format_sizes(t.sizes().vec()) +
                " " + std::string(c10::toString(t.scalar_type())) + " (" + std::to_string(bytes_reached(t)) +
                " bytes) but the file holds " + std::to_string(t.storage().nbytes()) +
                " bytes for it: a damaged or crafted file; nothing loaded");
}

// Copies the checkpoint's weights into `model` once every parameter was found with the model's shape and a
// floating-point type: a checkpoint that does not fit leaves the model as it was, and the error names the file,
// the parameter and both shapes.
void copy_weights(const std::string& path, torch::serialize::InputArchive& archive, ModelImpl& model) {
  torch::serialize::InputArchive weights;
  if (!archive.try_read("weights", weights)) throw IoError("checkpoint '" + path + "' has no weights");
  std::vector<std::pair<at::Tensor, at::Tensor>> pairs;  // (model parameter, checkpoint tensor)
  for (auto& p : model.named_parameters(true)) {
    at::Tensor t;
    if (!weights.try_read(p.key(), t)) {
      throw ConfigError("checkpoint '" + path + "' has no parameter '" + p.key() + "'");
    }
    if (t.sizes() != p.value().sizes()) {
      throw ConfigError("checkpoint '" + path + "': parameter '" + p.key() + "' has shape " +
                        format_sizes(t.sizes().vec()) + " but the model expects " +
                        format_sizes(p.value().sizes().vec()) + "; nothing loaded");
    }
    if (!at::isFloatingType(t.scalar_type())) {
      throw ConfigError("checkpoint '" + path + "': parameter '" + p.key() + "' holds " +
                        std::string(c10::toString(t.scalar_type())) + ", not floating point; nothing loaded");
    }
    check_storage(path, p.key(), t);
    pairs.emplace_back(p.value(), t);
  }
  at::NoGradGuard no_grad;
  for (auto& [param, t] : pairs) param.copy_(t);
}

double optimizer_lr(const TrainingState& state) {
  if (!state.optimizer || state.optimizer->param_groups().empty()) return state.compile.optimizer().learning_rate();
  return state.optimizer->param_groups().at(0).options().get_lr();
}

void write_rng_state(torch::serialize::OutputArchive& archive) {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  archive.write("rng_cpu", gen.get_state());
}

void read_rng_state(torch::serialize::InputArchive& archive) {
  at::Tensor rng;
  if (!archive.try_read("rng_cpu", rng)) return;
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(rng);
}

}  // namespace

namespace {
// [H, W] of a single image input whose size is unknown in the model's config (null otherwise).
nlohmann::json built_input_size(const ModelImpl& model) {
  if (model.inputs().size() != 1 || model.unknown_input_axes().empty()) return nullptr;
  const Shape& s = model.input_shape();
  return nlohmann::json::array({s.at(0), s.at(1)});
}
}  // namespace

void save_checkpoint(const std::string& path, const TrainingState& state) {
  if (!state.model) throw ConfigError("save_checkpoint('" + path + "'): no model");
  const auto& pos = state.position;
  torch::serialize::OutputArchive archive;
  nlohmann::json meta = {{"magic", kMagic},
                         {"format_version", kFormatVersion},
                         {"torchfit_version", TORCHFIT_VERSION},
                         {"model", state.model->to_json()},
                         {"input_size", built_input_size(*state.model)},
                         {"compile", compile_json(state.compile, optimizer_lr(state))},
                         {"class_indices", state.class_indices},
                         {"position",
                          {{"epoch", pos.epoch},
                           {"step", pos.step},
                           {"train_batches", pos.train_batches},
                           {"val_batches", pos.val_batches},
                           {"batch_size", pos.batch_size},
                           {"train_samples", pos.train_samples},
                           {"data", pos.data}}}};
  if (!state.loss_scale.is_null()) meta["loss_scale"] = state.loss_scale;
  if (!state.optimizer_features.is_null()) meta["optimizer_features"] = state.optimizer_features;
  if (!state.class_weight.empty()) meta["class_weight"] = state.class_weight;
  if (!state.preprocessing.is_null()) meta["preprocessing"] = state.preprocessing;
  archive.write("torchfit", c10::IValue(meta.dump()));
  torch::serialize::OutputArchive weights;
  for (const auto& p : state.model->named_parameters(true)) {
    if (!torch::isfinite(p.value()).all().item<bool>()) {
      throw NumericError("save_checkpoint('" + path + "'): weight '" + p.key() +
                         "' holds non-finite values (nan/inf); a checkpoint is never written with them");
    }
    weights.write(p.key(), p.value().detach().cpu());
  }
  archive.write("weights", weights);
  if (state.optimizer) {
    torch::serialize::OutputArchive optim;
    state.optimizer->save(optim);
    archive.write("optimizer", optim);
  }
  if (!state.optimizer_slots.empty()) {
    torch::serialize::OutputArchive slots;
    for (const auto& [name, t] : state.optimizer_slots) slots.write(name, t);
    archive.write("optimizer_slots", slots);
  }
  if (state.save_own_variables) {
    torch::serialize::OutputArchive own;
    state.save_own_variables(own);
    archive.write("own_variables", own);
  }
  write_rng_state(archive);
  io::write_stream_atomically(path, [&](const io::ByteSink& sink) {
    archive.save_to([&](const void* data, size_t size) {
      sink(data, size);
      return size;
    });
  });
}

struct Checkpoint::Contents {
  torch::serialize::InputArchive archive;
};

std::shared_ptr<const Checkpoint> Checkpoint::read(const std::string& path) {
  std::shared_ptr<Checkpoint> checkpoint(new Checkpoint());
  checkpoint->path_ = path;
  checkpoint->contents_ = std::make_shared<Contents>();
  open_archive(path, checkpoint->contents_->archive);
  checkpoint->info_ = read_info(path, checkpoint->contents_->archive);
  return checkpoint;
}

CheckpointInfo read_checkpoint_info(const std::string& path) { return Checkpoint::read(path)->info(); }

Model load_model(const Checkpoint& checkpoint) {
  Model model = model_from_checkpoint(checkpoint.path(), checkpoint.info());
  copy_weights(checkpoint.path(), checkpoint.contents().archive, *model);
  return model;
}

Model load_model(const std::string& path, CheckpointInfo* info_out) {
  const auto checkpoint = Checkpoint::read(path);
  Model model = load_model(*checkpoint);
  if (info_out) *info_out = checkpoint->info();
  return model;
}

void load_weights(const std::string& path, ModelImpl& model) {
  const auto checkpoint = Checkpoint::read(path);
  copy_weights(path, checkpoint->contents().archive, model);
}

namespace {

void load_optimizer_state(const std::string& path, torch::serialize::InputArchive& archive, const CheckpointInfo& info,
                          const TrainingState& state) {
  const auto saved = info.compile.value("optimizer", nlohmann::json::object());
  if (saved.value("name", "") != state.compile.optimizer().name()) return;
  torch::serialize::InputArchive optim;
  if (archive.try_read("optimizer", optim)) {
    try {
      state.optimizer->load(optim);
    } catch (const std::exception& e) {
      std::string why = e.what();
      throw IoError("checkpoint '" + path +
                    "': optimizer state does not fit this model: " + why.substr(0, why.find('\n')));
    }
  }
  const double lr = saved.value("learning_rate", optimizer_lr(state));
  for (auto& g : state.optimizer->param_groups()) g.options().set_lr(lr);
}

}  // namespace

CheckpointInfo load_checkpoint(const Checkpoint& checkpoint, const TrainingState& state) {
  const std::string& path = checkpoint.path();
  if (!state.model) throw ConfigError("load_checkpoint('" + path + "'): no model to load into");
  auto& archive = checkpoint.contents().archive;
  copy_weights(path, archive, *state.model.ptr());
  CheckpointInfo info = checkpoint.info();
  if (state.optimizer) load_optimizer_state(path, archive, info, state);
  torch::serialize::InputArchive slots;
  if (state.optimizer && archive.try_read("optimizer_slots", slots)) {
    for (const auto& key : slots.keys()) {
      at::Tensor t;
      slots.read(key, t);
      check_storage(path, "optimizer_slots/" + key, t);
      info.optimizer_slots[key] = t;
    }
  }
  torch::serialize::InputArchive own;
  // (A store written by a step without variables of its own is empty: nothing to load.)
  if (state.load_own_variables && archive.try_read("own_variables", own) && !own.keys().empty()) {
    try {
      state.load_own_variables(own);
    } catch (const c10::Error& e) {
      const std::string why = e.what();
      throw IoError("checkpoint '" + path +
                    "': the custom step's own variables do not load: " + why.substr(0, why.find('\n')));
    }
  }
  read_rng_state(archive);
  return info;
}

CheckpointInfo load_checkpoint(const std::string& path, const TrainingState& state) {
  if (!state.model) throw ConfigError("load_checkpoint('" + path + "'): no model to load into");
  return load_checkpoint(*Checkpoint::read(path), state);
}

Model load_checkpoint_or_keras(const std::string& path, const std::string& architecture_json, CheckpointInfo* info,
                               const std::optional<InputSize>& input_size) {
  if (!keras::is_keras_file(path)) {
    if (!architecture_json.empty()) {
      throw ConfigError(path + ": an architecture JSON goes with a Keras weights file (.h5), not a checkpoint");
    }
    Model model = load_model(path, info);
    model->eval();
    return model;
  }
  keras::KerasImportOptions options;
  options.input_size = input_size;
  keras::TorchfitMetadata torchfit;
  Model model = keras::load_keras_model(path, architecture_json, options, &torchfit);
  if (info) {
    *info = CheckpointInfo{};
    info->model_config = model->to_json();
    for (size_t k = 0; k < torchfit.class_names.size(); ++k)
      info->class_indices[torchfit.class_names[k]] = static_cast<int64_t>(k);
    info->preprocessing = torchfit.preprocessing;
  }
  return model;
}

}  // namespace torchfit::saving
