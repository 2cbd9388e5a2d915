#pragma once
/// @file csv_logger.h
/// CSVLogger — streams each epoch's logs to a CSV file (keras.callbacks.CSVLogger).
#include <string>
#include <vector>

#include <torch/arg.h>

#include <torchfit/io/csv.h>
#include <torchfit/training/callback.h>

namespace torchfit {

/// Options of CSVLogger, Keras names and defaults.
struct CSVLoggerOptions {
  explicit CSVLoggerOptions(std::string filename) : filename_(std::move(filename)) {}
  /// The CSV file to write (its folder must exist).
  TORCH_ARG(std::string, filename);
  /// Cell separator (Keras `separator`, default ','); cells holding it are quoted.
  TORCH_ARG(char, separator) = ',';
  /// Append to an existing file instead of replacing it (Keras `append`, default false).
  TORCH_ARG(bool, append) = false;
};

/// As keras.callbacks.CSVLogger: header `epoch,<sorted log keys>` (not when appending to a file that
/// has rows), then one row per epoch (0-based epoch, as Keras; values with 6 significant digits; a key
/// missing from a later epoch's logs leaves its cell empty), flushed each row. Written through
/// io::CsvWriter (libcsv, RFC 4180 quoting of cells holding the separator, a quote or a line break; LF
/// line ends, where Keras's csv module writes CRLF).
/// Errors: IoError naming the file and the OS reason when it cannot be opened (at on_train_begin) or a
/// row cannot be written (e.g. "cannot write 'log.csv': No space left on device").
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(CSVLoggerOptions options);
  void on_train_begin(const Logs& logs) override;
  bool chief_only() const override { return true; }  ///< rank 0 only in data-parallel runs
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  CSVLoggerOptions options_;
  io::CsvWriter file_;
  std::vector<std::string> keys_;
  bool write_header_ = true;
};

}  // namespace torchfit
