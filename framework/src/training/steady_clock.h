#pragma once
// Private: the monotonic clock fit() and its loggers read, in milliseconds.
#include <chrono>

namespace torchfit::detail {

inline double steady_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace torchfit::detail
