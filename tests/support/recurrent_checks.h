#pragma once
// Shared by the recurrent layers' tests (SimpleRNN, LSTM, GRU): a built layer over (4, 3) sequences with
// random weights, and a refusal that names the class and the word at fault.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include <ATen/ATen.h>
#include <torchfit/error.h>
#include <torchfit/model/sequential.h>

#include "support/keras_reference.h"

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

/// LSTM / GRU: for each case {options, fused}, the built layer in eval takes the fused path or not as the case
/// says, and its forward over a (2, 4, 3) input matches the NumPy reference of `request(options)`.
template <typename Holder, typename Case, typename Request>
void expect_recurrent_cases_match_reference(const std::vector<Case>& cases, Request request) {
  for (const Case& c : cases) {
    SCOPED_TRACE(request(c.options).dump() + (c.options.use_bias() ? "" : " no bias"));
    Holder layer = built_recurrent<Holder>(c.options);
    layer->eval();
    EXPECT_EQ(layer->fused(false), c.fused);
    at::manual_seed(5);
    const at::Tensor x = at::randn({2, 4, 3});
    nlohmann::json req = request(c.options);
    req["x"] = tensor_json(x);
    req["kernel"] = tensor_json(layer->kernel);
    req["recurrent_kernel"] = tensor_json(layer->recurrent_kernel);
    if (c.options.use_bias()) req["bias"] = tensor_json(layer->bias);
    at::NoGradGuard no_grad;
    expect_matches_reference(layer->forward(x), keras_reference(req));
  }
}

/// For each case, the input's and every Keras weight's gradient match the reference's central differences.
template <typename Holder, typename Case, typename Request>
void expect_recurrent_case_gradients_match_reference(const std::vector<Case>& cases, Request request) {
  for (const Case& c : cases) {
    SCOPED_TRACE(request(c.options).dump() + (c.options.use_bias() ? "" : " no bias"));
    std::vector<std::string> names = {"kernel", "recurrent_kernel"};
    if (c.options.use_bias()) names.push_back("bias");
    expect_gradients_match_reference(Holder(c.options).ptr(), {4, 3}, request(c.options), names);
  }
}

}  // namespace torchfit::testing
