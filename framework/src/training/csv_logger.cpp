#include <torchfit/training/csv_logger.h>

#include <filesystem>
#include <sstream>

#include <torchfit/error.h>

namespace torchfit {

CSVLogger::CSVLogger(CSVLoggerOptions options) : options_(std::move(options)) {}

void CSVLogger::on_train_begin(const Logs&) {
  std::error_code ec;
  // As Keras: appending to a file that already has rows writes no second header.
  write_header_ = !options_.append() || std::filesystem::file_size(options_.filename(), ec) == 0 || ec;
  try {
    file_.open(options_.filename(), options_.append(), options_.separator());
  } catch (const IoError& e) {
    throw IoError(std::string("CSVLogger: ") + e.what());
  }
  keys_.clear();
}

void CSVLogger::on_epoch_end(int epoch, const Logs& logs) {
  if (keys_.empty()) {
    for (const auto& [k, v] : logs) keys_.push_back(k);
    if (write_header_) {
      std::vector<std::string> header = {"epoch"};
      header.insert(header.end(), keys_.begin(), keys_.end());
      file_.write_row(header);
    }
  }
  std::vector<std::string> row = {std::to_string(epoch)};
  for (const auto& k : keys_) {
    auto it = logs.find(k);
    std::ostringstream cell;                         // the stream's default: 6 significant digits
    if (it != logs.end()) cell << it->second + 0.0;  // never "-0"
    row.push_back(cell.str());
  }
  file_.write_row(row);
}

void CSVLogger::on_train_end(const Logs&) { file_.close(); }

}  // namespace torchfit
