#include <torchfit/training/model_checkpoint.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <fmt/args.h>
#include <fmt/format.h>

#include <torchfit/runtime/logging.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

ModelCheckpoint::ModelCheckpoint(ModelCheckpointOptions options)
    : options_(std::move(options)), monitor_(options_.monitor(), options_.mode(), 0.0) {
  if (options_.filepath().empty()) throw ConfigError("ModelCheckpoint: filepath is empty");
  if (options_.save_best_only() && options_.save_freq() > 0) {
    throw ConfigError("ModelCheckpoint: save_best_only saves at epoch ends only; it does not combine with save_freq " +
                      std::to_string(options_.save_freq()));
  }
  if (options_.save_freq() < 0) {
    throw ConfigError("ModelCheckpoint: save_freq must be >= 0, got " + std::to_string(options_.save_freq()));
  }
}

namespace {

std::string joined_keys(const Logs& logs) {
  std::string keys = "epoch, batch";
  for (const auto& [key, value] : logs) keys += ", " + key;
  return keys;
}

// Keras formats filepath with keyword arguments only, so "{}" or "{0}" raise there; fmt would fill them by
// position (the epoch, the batch, ...). Refused with the reason.
void check_named_fields(const std::string& pattern) {
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '{') continue;
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      ++i;
      continue;
    }
    const size_t end = pattern.find_first_of(":}!", i + 1);
    const std::string name = pattern.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
      throw ConfigError("ModelCheckpoint: filepath '" + pattern + "' has a positional field '{" + name +
                        "}': name the field, e.g. {epoch:02d} or {val_loss:.2f} (as Keras, which formats by name)");
    }
  }
}

}  // namespace

std::string format_filepath(const std::string& pattern, int epoch, int64_t batch, const Logs& logs) {
  check_named_fields(pattern);
  fmt::dynamic_format_arg_store<fmt::format_context> args;
  args.push_back(fmt::arg("epoch", epoch + 1));
  args.push_back(fmt::arg("batch", batch + 1));
  for (const auto& [key, value] : logs) args.push_back(fmt::arg(key.c_str(), value));
  try {
    return fmt::vformat(pattern, args);
  } catch (const fmt::format_error& e) {
    throw ConfigError("ModelCheckpoint: cannot format filepath '" + pattern + "': " + e.what() +
                      " (fields: " + joined_keys(logs) + "; Python format specs, e.g. {epoch:02d}, {val_loss:.2f})");
  }
}

bool ModelCheckpoint::save(int epoch, int64_t batch, const Logs& logs) {
  const std::string path = format_filepath(options_.filepath(), epoch, batch, logs);
  steps_since_save_ = 0;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;  // "{epoch}/w.ckpt" makes one folder per epoch
  if (!parent.empty() && !std::filesystem::create_directories(parent, ec) && ec) {
    throw IoError("ModelCheckpoint: cannot create folder '" + parent.string() + "': " + ec.message());
  }
  try {
    trainer().save_checkpoint(path,
                              options_.class_indices().empty() ? params().class_indices : options_.class_indices());
  } catch (const NumericError& e) {  // nan/inf weights are never written (saving::save_checkpoint)
    torchfit::logger().warn("ModelCheckpoint: not written at epoch {}, step {}: {}; {}", epoch + 1, batch + 1, e.what(),
                            last_saved_.empty() ? std::string("no checkpoint was written before")
                                                : "the last finite checkpoint is '" + last_saved_ + "'");
    return false;
  }
  last_saved_ = path;
  torchfit::logger().debug("ModelCheckpoint: saved {}", path);
  return true;
}

bool ModelCheckpoint::save_now(int epoch) {
  Logs logs = latest_logs_;
  for (const auto& key : {std::string("loss"), std::string("val_loss")}) logs.emplace(key, std::nan(""));
  for (const auto& m : trainer().metric_names()) {
    logs.emplace(m, std::nan(""));
    logs.emplace("val_" + m, std::nan(""));
  }
  return save(epoch, trainer().position().step - 1, logs);
}

// The keys present at every save: epoch logs (with val_ keys when validating) and, with save_freq, the
// batch logs too, whose keys are the epoch logs' without val_ ones.
std::string ModelCheckpoint::check_filepath_keys() const {
  Logs logs{{"loss", 0.0}, {"lr", 0.0}};
  for (const auto& m : trainer().metric_names()) logs[m] = 0.0;
  if (params().validation && options_.save_freq() == 0) {
    logs["val_loss"] = 0.0;
    for (const auto& m : trainer().metric_names()) logs["val_" + m] = 0.0;
  }
  if (options_.save_freq() > 0) logs.erase("lr");
  return format_filepath(options_.filepath(), 0, 0, logs);
}

void ModelCheckpoint::on_train_begin(const Logs&) {
  namespace fs = std::filesystem;
  saved_on_interrupt_ = false;
  const fs::path path(check_filepath_keys());  // the first file's name: its folder is probed
  // The last epoch's name too (more digits): a name the file system cannot take fails now, not at a save.
  Logs last{{"loss", 0.0}, {"lr", 0.0}, {"val_loss", 0.0}};
  for (const auto& m : trainer().metric_names()) last[m] = last["val_" + m] = 0.0;
  for (const fs::path& p : {path, fs::path(format_filepath(options_.filepath(), std::max(params().epochs - 1, 0),
                                                           std::max<int64_t>(params().steps - 1, 0), last))}) {
    for (const auto& part : p) {
      if (part.string().size() > 255) {
        throw ConfigError("ModelCheckpoint: filepath '" + options_.filepath() + "' gives a file name of " +
                          std::to_string(part.string().size()) + " bytes, above NAME_MAX (255)");
      }
    }
  }
  if (fs::is_directory(path)) {
    throw IoError("ModelCheckpoint: filepath '" + options_.filepath() + "' is a directory; give a file path");
  }
  io::ensure_writable_directory(path.has_parent_path() ? path.parent_path().string() : std::string("."));
}

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  latest_logs_ = logs;
  if (options_.save_best_only() && !monitor_.improved(monitor_.get(logs, "ModelCheckpoint"))) return;
  save(epoch, params().steps - 1, logs);
}

void ModelCheckpoint::on_train_batch_end(int64_t batch, const Logs& logs) {
  latest_logs_ = logs;
  if (options_.save_freq() > 0 && !options_.save_best_only() && ++steps_since_save_ >= options_.save_freq()) {
    save(trainer().position().epoch, batch, logs);
  }
}

void ModelCheckpoint::on_train_end(const Logs&) {
  holds_averaged_weights_ = false;
  if (trainer().interrupted()) {
    saved_on_interrupt_ = save_now(trainer().position().epoch);
  } else if (trainer().optimizer_features().finalized() && !last_saved_.empty()) {
    // fit() ended with the averaged weights (use_ema, Keras's finalize_variable_values): the last checkpoint's
    // model takes them, as model.save() after fit would; its training state keeps the trained weights.
    trainer().save_checkpoint(last_saved_,
                              options_.class_indices().empty() ? params().class_indices : options_.class_indices());
    holds_averaged_weights_ = true;
  }
}

}  // namespace torchfit
