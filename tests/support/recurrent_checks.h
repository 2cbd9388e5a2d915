#pragma once
// Shared by the recurrent layers' tests (SimpleRNN, LSTM, GRU): a built layer over (4, 3) sequences with
// random weights, and a refusal that names the class and the word at fault.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <ATen/ATen.h>
#include <torchfit/error.h>
#include <torchfit/model/sequential.h>

namespace torchfit::testing {

/// The layer `Holder` (SimpleRNN, LSTM, GRU) of `o` built over (4, 3) sequences in a Sequential, its
/// parameters drawn from N(0, 0.25) with seed 3.
template <typename Holder, typename Options>
Holder built_recurrent(Options o) {
  Holder layer(o.input_shape(Shape{4, 3}));
  Sequential m;
  m->add(layer);
  at::manual_seed(3);
  for (auto& p : layer->parameters()) p.data().copy_(at::randn_like(p) * 0.5);
  return layer;
}

/// `make` throws a ConfigError whose message names `cls` and `word`.
inline void expect_refused_naming(const std::function<void()>& make, const std::string& cls, const std::string& word) {
  try {
    make();
    FAIL() << word << " accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(cls), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

}  // namespace torchfit::testing
