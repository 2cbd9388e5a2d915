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
