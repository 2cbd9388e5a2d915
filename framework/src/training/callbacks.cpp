#include <torchfit/training/callbacks.h>

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include <torchfit/error.h>
#include <torchfit/io/checkpoint.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

Trainer& Callback::trainer() const {
  if (!trainer_) throw Error("callback used outside Trainer::fit (no trainer set)");
  return *trainer_;
}

// ---------------------------------------------------------------- Monitor
Monitor::Monitor(std::string monitor, std::string mode, double min_delta)
    : monitor_(std::move(monitor)), min_delta_(std::fabs(min_delta)) {
  if (mode == "auto") {
    maximize_ = monitor_.find("acc") != std::string::npos;
  } else if (mode == "min" || mode == "max") {
    maximize_ = mode == "max";
  } else {
    throw ConfigError("monitor mode must be auto, min or max, got '" + mode + "'");
  }
  reset();
}

void Monitor::reset() {
  best_ = maximize_ ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
}

bool Monitor::better(double value, double reference) const {
  return maximize_ ? value - min_delta_ > reference : value + min_delta_ < reference;
}

bool Monitor::improved(double value) {
  if (better(value, best_)) {
    best_ = value;
    return true;
  }
  return false;
}

double Monitor::get(const Logs& logs, const std::string& who) const {
  auto it = logs.find(monitor_);
  if (it == logs.end()) {
    std::string keys;
    for (const auto& [k, v] : logs) keys += (keys.empty() ? "" : ", ") + k;
    throw ConfigError(who + ": monitored value '" + monitor_ + "' is not in the epoch logs (available: " + keys +
                      ")");
  }
  return it->second;
}

// ---------------------------------------------------------------- ModelCheckpoint
ModelCheckpoint::ModelCheckpoint(std::string filepath, std::string monitor, bool save_best_only, std::string mode,
                                 int64_t save_freq)
    : filepath_(std::move(filepath)),
      save_best_only_(save_best_only),
      save_freq_(save_freq),
      monitor_(std::move(monitor), mode, 0.0) {
  if (save_freq < 0) throw ConfigError("ModelCheckpoint: save_freq must be >= 0, got " + std::to_string(save_freq));
}

void ModelCheckpoint::save_now(int epoch) {
  std::string path = filepath_;
  const auto pos = path.find("{epoch}");
  if (pos != std::string::npos) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%02d", epoch + 1);
    path.replace(pos, 7, buf);
  }
  io::save_checkpoint(path, trainer(), class_indices_);
  last_saved_ = path;
  steps_since_save_ = 0;
  spdlog::debug("ModelCheckpoint: saved {}", path);  // Keras default verbose=0: silent
}

void ModelCheckpoint::on_epoch_end(int epoch, const Logs& logs) {
  if (save_best_only_ && !monitor_.improved(monitor_.get(logs, "ModelCheckpoint"))) return;
  save_now(epoch);
}

void ModelCheckpoint::on_train_batch_end(int64_t, const Logs&) {
  if (save_freq_ > 0 && !save_best_only_ && ++steps_since_save_ >= save_freq_) {
    save_now(trainer().position().epoch);
  }
}

// ---------------------------------------------------------------- EarlyStopping
EarlyStopping::EarlyStopping(std::string monitor, double min_delta, int patience, std::string mode,
                             bool restore_best_weights)
    : monitor_(std::move(monitor), mode, min_delta), patience_(patience), restore_(restore_best_weights) {}

void EarlyStopping::on_train_begin(const Logs&) {
  wait_ = 0;
  stopped_epoch_ = -1;
  monitor_.reset();
  best_weights_.clear();
}

void EarlyStopping::on_epoch_end(int epoch, const Logs& logs) {
  const double v = monitor_.get(logs, "EarlyStopping");
  auto& model = trainer().model();
  if (monitor_.improved(v)) {
    wait_ = 0;
    if (restore_) {
      best_weights_.clear();
      for (const auto& p : model->named_parameters()) best_weights_[p.key()] = p.value().detach().clone();
    }
    return;
  }
  if (++wait_ >= patience_) {
    stopped_epoch_ = epoch;
    trainer().stop_training = true;
    if (restore_ && !best_weights_.empty()) {
      at::NoGradGuard g;
      for (auto& p : model->named_parameters()) p.value().copy_(best_weights_.at(p.key()));
      spdlog::info("EarlyStopping: restored the weights of the best epoch ({} = {})", monitor_.name(),
                   monitor_.best());
    }
  }
}

// ---------------------------------------------------------------- CSVLogger
CSVLogger::CSVLogger(std::string filename, char separator, bool append)
    : filename_(std::move(filename)), sep_(separator), append_(append) {}

void CSVLogger::on_train_begin(const Logs&) {
  file_.open(filename_, append_ ? std::ios::app : std::ios::trunc);
  if (!file_) throw IoError("CSVLogger: cannot open '" + filename_ + "' for writing");
  keys_.clear();
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (keys_.empty()) {
    for (const auto& [k, v] : logs) keys_.push_back(k);
    file_ << "epoch";
    for (const auto& k : keys_) file_ << sep_ << k;
    file_ << "\n";
  }
  file_ << epoch;
  for (const auto& k : keys_) {
    auto it = logs.find(k);
    file_ << sep_;
    if (it != logs.end()) file_ << it->second;
  }
  file_ << "\n" << std::flush;
}

void CSVLogger::on_train_end(const Logs&) { file_.close(); }

// ---------------------------------------------------------------- ReduceLROnPlateau
ReduceLROnPlateau::ReduceLROnPlateau(std::string monitor, double factor, int patience, std::string mode,
                                     double min_delta, int cooldown, double min_lr)
    : monitor_(std::move(monitor), mode, min_delta),
      factor_(factor),
      patience_(patience),
      cooldown_(cooldown),
      min_lr_(min_lr) {
  if (factor >= 1.0 || factor <= 0.0) {
    throw ConfigError("ReduceLROnPlateau: factor must be in (0, 1), got " + std::to_string(factor));
  }
}

void ReduceLROnPlateau::on_train_begin(const Logs&) {
  wait_ = 0;
  cooldown_counter_ = 0;
  monitor_.reset();
}

void ReduceLROnPlateau::on_epoch_end(int epoch, const Logs& logs) {
  const double v = monitor_.get(logs, "ReduceLROnPlateau");
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    wait_ = 0;
  }
  if (monitor_.improved(v)) {
    wait_ = 0;
  } else if (cooldown_counter_ <= 0 && ++wait_ >= patience_) {
    auto& t = trainer();
    const double old_lr = t.learning_rate();
    if (old_lr > min_lr_) {
      const double new_lr = std::max(old_lr * factor_, min_lr_);
      t.set_learning_rate(new_lr);
      spdlog::info("Epoch {}: ReduceLROnPlateau reducing learning rate to {}", epoch + 1, new_lr);
      cooldown_counter_ = cooldown_;
      wait_ = 0;
    }
  }
}

// ---------------------------------------------------------------- LearningRateScheduler
LearningRateScheduler::LearningRateScheduler(std::function<double(int, double)> schedule)
    : schedule_(std::move(schedule)) {}

void LearningRateScheduler::on_epoch_begin(int epoch, const Logs&) {
  auto& t = trainer();
  const double lr = schedule_(epoch, t.learning_rate());
  if (!(lr > 0.0) || !std::isfinite(lr)) {
    throw ConfigError("LearningRateScheduler: schedule returned an invalid learning rate " + std::to_string(lr));
  }
  t.set_learning_rate(lr);
}

}  // namespace torchfit
