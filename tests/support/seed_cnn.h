#pragma once
// The article's seed CNN, shared by tests (the library's definition).
#include <torchfit/model/seed_cnn.h>

namespace torchfit::testing {
using torchfit::seed_cnn;
}  // namespace torchfit::testing
