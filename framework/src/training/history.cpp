#include <torchfit/training/history.h>

#include <stdexcept>

namespace torchfit {

double History::last(const std::string& key) const {
  auto it = history.find(key);
  if (it == history.end() || it->second.empty()) {
    throw std::out_of_range("History has no values for '" + key + "'");
  }
  return it->second.back();
}

}  // namespace torchfit

namespace torchfit {

void HistoryRecorder::on_epoch_end(int epoch, const Logs& logs) {
  history_.epoch.push_back(epoch);
  for (const auto& [k, v] : logs) history_.history[k].push_back(v);
}

}  // namespace torchfit
