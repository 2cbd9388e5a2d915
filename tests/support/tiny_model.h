#pragma once
// The tests' tiny model: a two-layer MLP that builds, trains and evaluates in milliseconds.
#include <cstdint>

#include <torchfit/layers/dense.h>
#include <torchfit/model/sequential.h>

namespace torchfit::testing {

/// Sequential MLP: Dense(8, relu, input_shape (in)) → Dense(classes, softmax).
/// Input (N, in) float32; output (N, classes) probabilities (rows sum to 1).
/// Trainable parameters: (in·8 + 8) + (8·classes + classes) — 67 for the defaults (in 4, classes 3).
/// Layer names dense, dense_1. Weights come from LibTorch's global generator: call
/// at::manual_seed first for reproducible values.
inline Sequential tiny_mlp(int64_t in = 4, int64_t classes = 3) {
  Sequential m;
  m->add(Dense(DenseOptions(8).activation("relu").input_shape(Shape{in})));
  m->add(Dense(DenseOptions(classes).activation("softmax")));
  return m;
}

}  // namespace torchfit::testing
