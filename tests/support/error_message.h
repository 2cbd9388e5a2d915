#pragma once
// The message of the exception of type E that `f` throws, or "(no <what>)" when it throws none (tests that
// check what an error names).
#include <functional>
#include <string>

namespace torchfit::testing {

template <typename E>
std::string error_message(const std::function<void()>& f, const char* what = "error") {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return std::string("(no ") + what + ")";
}

}  // namespace torchfit::testing
