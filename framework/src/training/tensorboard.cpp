#include <torchfit/training/tensorboard.h>

#include <cmath>
#include <filesystem>

#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

namespace torchfit {
namespace {

// "epoch" → 0, "batch" → 1, "N" → N (N ≥ 1).
int64_t parse_update_freq(const std::string& f) {
  if (f == "epoch") return 0;
  if (f == "batch") return 1;
  try {
    size_t used = 0;
    const long long n = std::stoll(f, &used);
    if (used == f.size() && n >= 1) return n;
  } catch (const std::exception&) {
  }
  throw ConfigError("TensorBoard: update_freq must be \"epoch\", \"batch\" or a number of batches >= 1, got '" + f +
                    "'");
}

// Training values: not the step's timings ("*_ms"), sizes or warm-up flags.
bool is_value_key(const std::string& key) {
  const bool timing = key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0;
  return !timing && key != "size" && key != "warmup";
}

}  // namespace

TensorBoard::TensorBoard(TensorBoardOptions options)
    : options_(std::move(options)), every_(parse_update_freq(options_.update_freq())) {}

void TensorBoard::on_train_begin(const Logs&) {
  const std::filesystem::path dir(options_.log_dir());
  train_ = std::make_unique<io::EventFileWriter>((dir / "train").string());
  if (params().validation) validation_ = std::make_unique<io::EventFileWriter>((dir / "validation").string());
}

void TensorBoard::on_train_batch_end(int64_t, const Logs& logs) {
  if (every_ == 0 || !train_) return;
  const int64_t step = trainer().position().train_batches;
  if (step % every_ != 0) return;
  train_->add_scalar("batch_loss", logs.at("loss"), step);
  for (const auto& m : trainer().metric_names()) {
    const auto it = logs.find(m);
    if (it != logs.end()) train_->add_scalar("batch_" + m, it->second, step);
  }
}

void TensorBoard::on_epoch_end(int epoch, const Logs& logs) {
  if (!train_) return;
  for (const auto& [key, value] : logs) {
    if (!is_value_key(key)) continue;
    if (key == "lr") {
      train_->add_scalar("epoch_learning_rate", value, epoch);
    } else if (key.rfind("val_", 0) == 0) {
      if (validation_) validation_->add_scalar("epoch_" + key.substr(4), value, epoch);
    } else {
      train_->add_scalar("epoch_" + key, value, epoch);
    }
  }
}

void TensorBoard::on_train_end(const Logs&) {
  train_.reset();
  validation_.reset();
}

}  // namespace torchfit
