// What the augmentation layers' tests share: the layer's training forward under a seed, the checks that it is
// seeded, changes its input in train() and is the input in eval(), a Keras 3 config reaching it and a
// ConfigError's message.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <nlohmann/json.hpp>

#include <torchfit/error.h>
#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>
#include "support/keras_reference.h"

namespace torchfit::testing {

/// `layer` in train() on x (N, C, H, W) after at::manual_seed(seed), in a Sequential.
inline at::Tensor seeded_train_forward(const std::shared_ptr<Layer>& layer, const at::Tensor& x, uint64_t seed) {
  layer->set_declared_input_shape(Shape{x.size(2), x.size(3), x.size(1)});
  Sequential m;
  m->add(layer);
  m->train();
  at::manual_seed(seed);
  return m->forward(x);
}

/// Layers from `make` (each a fresh one): the same seed gives the same output, another seed another, train()
/// changes the input, eval() returns it unchanged.
inline void expect_seeded_and_inference_identity(const std::function<std::shared_ptr<Layer>()>& make,
                                                 const at::Tensor& x) {
  const at::Tensor y = seeded_train_forward(make(), x, 5);
  EXPECT_FALSE(at::allclose(y, x)) << "train() changes the images";
  EXPECT_TRUE(at::equal(seeded_train_forward(make(), x, 5), y)) << "the same seed, the same output";
  EXPECT_FALSE(at::equal(seeded_train_forward(make(), x, 6), y)) << "another seed, another output";
  // The draws follow LibTorch's CPU generator, whose state a checkpoint saves (rng_cpu): restoring it repeats them.
  auto generator = at::detail::getDefaultCPUGenerator();
  at::manual_seed(9);
  const auto layer_for_resume = make();
  (void)seeded_train_forward(layer_for_resume, x, 9);  // builds it; the draws after this one are compared
  const at::Tensor state = generator.get_state();
  const at::Tensor first = layer_for_resume->forward(x);
  generator.set_state(state);
  EXPECT_TRUE(at::equal(layer_for_resume->forward(x), first)) << "the CPU generator's saved state repeats the draws";
  const auto layer = make();
  layer->eval();
  EXPECT_TRUE(at::equal(layer->forward(x), x)) << "eval() is the input";
}

/// The layer a Keras 3 config `layer` (module, class_name, config) builds in a Sequential of input (5, 7, 3),
/// checked to round-trip through torchfit's own config.
template <typename Impl>
std::shared_ptr<Impl> layer_from_keras3(const nlohmann::json& layer) {
  const Model model = model_from_json(keras3_sequential_of({5, 7, 3}, layer));
  auto built = std::dynamic_pointer_cast<Impl>(model->get_layer(layer["config"]["name"].get<std::string>()));
  EXPECT_TRUE(built);
  if (built) EXPECT_EQ(layer_to_json(*layer_from_json(layer_to_json(*built))), layer_to_json(*built));
  return built;
}

/// Keras 3's serialization of an image preprocessing layer `cls` named `name` with `args` (plus the keys every
/// such layer writes: trainable, dtype, data_format, seed).
inline nlohmann::json keras3_augmentation_layer(const std::string& cls, const std::string& name, nlohmann::json args) {
  args["name"] = name;
  args["trainable"] = true;
  args["dtype"] = "float32";
  args["data_format"] = "channels_last";
  args["seed"] = 1337;
  return {{"module", "keras.layers"}, {"class_name", cls}, {"registered_name", nullptr}, {"config", args}};
}

/// `build` throws a ConfigError whose message holds `expected`.
inline void expect_config_error(const std::function<void()>& build, const std::string& expected) {
  try {
    build();
    ADD_FAILURE() << "no error, expected: " << expected;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

/// The fill modes and interpolations of Keras's affine_transform.
inline const std::vector<std::string>& affine_fill_modes() {
  static const std::vector<std::string> modes = {"reflect", "wrap", "constant", "nearest"};
  return modes;
}
inline const std::vector<std::string>& affine_interpolations() {
  static const std::vector<std::string> modes = {"bilinear", "nearest"};
  return modes;
}

/// Whether every value of `t` lies in [lo, hi), the smallest within 2% of the range above lo and the largest
/// within 2% below hi (many draws cover the range).
inline void expect_covers_range(const at::Tensor& t, double lo, double hi) {
  const double mn = t.min().item<double>(), mx = t.max().item<double>(), span = hi - lo;
  EXPECT_GE(mn, lo);
  EXPECT_LT(mx, hi + 1e-6 * std::abs(hi));
  EXPECT_LT(mn, lo + 0.02 * span) << "draws reach the lower bound " << lo;
  EXPECT_GT(mx, hi - 0.02 * span) << "draws reach the upper bound " << hi;
}

}  // namespace torchfit::testing
