#pragma once
/// @file csv_logger.h
/// CSVLogger — streams each epoch's logs to a CSV file (keras.callbacks.CSVLogger).
#include <fstream>
#include <string>
#include <vector>

#include <torch/arg.h>

#include <torchfit/training/callback.h>

namespace torchfit {

/// Options of CSVLogger, Keras names and defaults.
struct CSVLoggerOptions {
  explicit CSVLoggerOptions(std::string filename) : filename_(std::move(filename)) {}
  TORCH_ARG(std::string, filename);
  TORCH_ARG(char, separator) = ',';
  /// Append to an existing file instead of replacing it.
  TORCH_ARG(bool, append) = false;
};

/// Header `epoch,<sorted log keys>` (not when appending to a file that has rows), then one row per epoch
/// (0-based epoch, as Keras), flushed each row.
/// Errors: IoError naming the file when it cannot be opened (at on_train_begin) or written.
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(CSVLoggerOptions options);
  void on_train_begin(const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  CSVLoggerOptions options_;
  std::ofstream file_;
  std::vector<std::string> keys_;
  bool write_header_ = true;
};

}  // namespace torchfit
