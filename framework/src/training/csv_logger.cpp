#include <torchfit/training/csv_logger.h>

#include <filesystem>

#include <torchfit/error.h>

namespace torchfit {

CSVLogger::CSVLogger(CSVLoggerOptions options) : options_(std::move(options)) {}

void CSVLogger::on_train_begin(const Logs&) {
  std::error_code ec;
  // As Keras: appending to a file that already has rows writes no second header.
  write_header_ = !options_.append() || std::filesystem::file_size(options_.filename(), ec) == 0 || ec;
  file_.open(options_.filename(), options_.append() ? std::ios::app : std::ios::trunc);
  if (!file_) throw IoError("CSVLogger: cannot open '" + options_.filename() + "' for writing");
  keys_.clear();
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  const char sep = options_.separator();
  if (keys_.empty()) {
    for (const auto& [k, v] : logs) keys_.push_back(k);
    if (write_header_) {
      file_ << "epoch";
      for (const auto& k : keys_) file_ << sep << k;
      file_ << "\n";
    }
  }
  file_ << epoch;
  for (const auto& k : keys_) {
    auto it = logs.find(k);
    file_ << sep;
    if (it != logs.end()) file_ << it->second;
  }
  file_ << "\n" << std::flush;
  if (!file_) throw IoError("CSVLogger: cannot write '" + options_.filename() + "'");
}

void CSVLogger::on_train_end(const Logs&) { file_.close(); }

}  // namespace torchfit
