#pragma once
/// @file layer_conformance.h
/// One-call GoogleTest conformance check for a torchfit layer — built-in or your own.
///
/// Header-only; include it from a GoogleTest test (it uses EXPECT_/ADD_FAILURE, so the test binary links
/// GTest::gtest). Usage, one call per layer configuration:
///
///   #include <torchfit/testing/layer_conformance.h>
///   TEST(Swish, Conformance) {
///     torchfit::testing::expect_layer_conformance(
///         Swish(SwishOptions()).ptr(),
///         torchfit::testing::LayerConformance({8, 8, 3}, {8, 8, 3}).trainable_params(1));
///   }
///
/// What it checks (each failure names the layer and the check):
///  1. build: Sequential(layer) with `input_shape` gives `output_shape` (Keras order, batch excluded);
///  2. exact parameter counts: trainable and non-trainable (count_params() = their sum);
///  3. state lives in parameters: no buffers (torchfit checkpoints, EarlyStopping and load_weights carry
///     parameters; register non-trainable state with register_parameter(name, t, /*requires_grad=*/false))
///     — switch off with allow_buffers(true);
///  4. forward on a random (N, C, H, W) / (N, D) batch gives (N, to_tensor_shape(output_shape)), finite
///     values, and eval() is deterministic (two calls, bit-identical);
///  5. config round-trip: layer_from_json(layer_to_json(layer)) writes the same JSON (so the class is
///     registered and every argument is in config()), and builds to the same shapes and counts;
///  6. save/load: the layer's state written with LibTorch serialization and read into the rebuilt layer
///     gives bit-identical eval() outputs;
///  7. train vs eval: train() output equals eval() output up to float rounding (rtol 1e-4, atol
///     1e-5·max(1, max|y|)) (default), or differs when training_changes_output(true) (Dropout,
///     BatchNormalization);
///  8. gradients: after a backward pass every trainable parameter has a defined, non-zero gradient,
///     non-trainable ones get none, and the gradient reaches the input;
///  9. Keras weights: keras_weights() covers every parameter, and set_keras_weights() of them into the
///     rebuilt layer (its parameters zeroed first) gives bit-identical eval() outputs; one weight too many
///     is a ConfigError. Skipped for a class that declares no_keras_weights_reason().
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include <ATen/Parallel.h>
#include <torch/arg.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <torchfit/layers/registry.h>
#include <torchfit/model/sequential.h>

namespace torchfit::testing {

/// What a layer must do for one input shape. Shapes in Keras order ((H, W, C) or (D)), batch excluded.
struct LayerConformance {
  LayerConformance(Shape input_shape, Shape output_shape)
      : input_shape_(std::move(input_shape)), output_shape_(std::move(output_shape)) {}
  /// Per-sample input shape the layer is built for.
  TORCH_ARG(Shape, input_shape);
  /// Expected per-sample output shape.
  TORCH_ARG(Shape, output_shape);
  /// Exact trainable parameter count (default 0).
  TORCH_ARG(int64_t, trainable_params) = 0;
  /// Exact non-trainable parameter count (default 0; e.g. 2·C for BatchNormalization).
  TORCH_ARG(int64_t, non_trainable_params) = 0;
  /// Whether train() output differs from eval() output (Dropout, BatchNormalization). Default false.
  TORCH_ARG(bool, training_changes_output) = false;
  /// Accept buffers (state the checkpoints do not carry; see check 3). Default false.
  TORCH_ARG(bool, allow_buffers) = false;
  /// Batch size of the random input (≥ 2). Default 4.
  TORCH_ARG(int64_t, batch_size) = 4;
  /// Seed of the random input. Default 0.
  TORCH_ARG(uint64_t, seed) = 0;
  /// When > 0, the input holds integer indices in [0, index_input) (as floats), and no gradient reaches
  /// it (Embedding). Default 0: a random normal input, with a gradient.
  TORCH_ARG(int64_t, index_input) = 0;
};

namespace detail {

/// (N, to_tensor_shape(shape)...): a batch of `n` in tensor order.
inline Shape batch_shape(const Shape& keras_shape, int64_t n) {
  Shape s = to_tensor_shape(keras_shape);
  s.insert(s.begin(), n);
  return s;
}

/// Check 1: adds `layer` (declared input shape spec.input_shape()) to `model`. False when it does not build.
inline bool check_build(const std::shared_ptr<Layer>& layer, const LayerConformance& spec, Sequential& model) {
  layer->set_declared_input_shape(spec.input_shape());
  try {
    model->add(layer);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[build] " << e.what();
    return false;
  }
  EXPECT_EQ(format_shape(layer->output_shape()), format_shape(spec.output_shape())) << "[build] output shape";
  return true;
}

/// Checks 2 and 3: exact parameter counts, and no buffers unless allowed.
inline void check_params_and_state(const Layer& layer, const LayerConformance& spec) {
  EXPECT_EQ(layer.trainable_params(), spec.trainable_params()) << "[params] trainable";
  EXPECT_EQ(layer.non_trainable_params(), spec.non_trainable_params()) << "[params] non-trainable";
  EXPECT_EQ(layer.count_params(), spec.trainable_params() + spec.non_trainable_params()) << "[params] total";
  if (spec.allow_buffers()) return;
  for (const auto& b : layer.named_buffers(true)) {
    ADD_FAILURE() << "[state] buffer '" << b.key() << "': checkpoints carry parameters only; register it "
                  << "with register_parameter(name, tensor, /*requires_grad=*/false)";
  }
}

/// Check 4: eval() forward of `x` twice: bit-identical, shape `out_t`, finite. Returns the output, or an
/// undefined tensor when the forward throws or has the wrong shape.
inline at::Tensor check_eval_forward(Sequential& model, const at::Tensor& x, const Shape& out_t) {
  at::Tensor y;
  try {
    model->eval();
    at::NoGradGuard no_grad;
    y = model->forward(x).clone();
    EXPECT_TRUE(at::equal(y, model->forward(x))) << "[eval] two eval() forwards differ";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[eval] forward threw: " << e.what();
    return {};
  }
  if (y.sizes().vec() != out_t) {
    ADD_FAILURE() << "[eval] tensor shape (N, C, H, W) / (N, D): got " << y.sizes() << ", expected "
                  << at::IntArrayRef(out_t);
    return {};
  }
  EXPECT_TRUE(at::isfinite(y).all().item<bool>()) << "[eval] non-finite output";
  return y;
}

/// Check 5: layer_from_json(layer_to_json(layer)) writes the same JSON and builds to the same shapes and
/// counts. Returns the rebuilt layer in a Sequential, or an empty holder when it cannot be rebuilt.
inline Sequential check_config_round_trip(const Layer& layer, const LayerConformance& spec) {
  const nlohmann::json json = layer_to_json(layer);
  std::shared_ptr<Layer> rebuilt;
  Sequential model;
  try {
    rebuilt = layer_from_json(json);
    EXPECT_EQ(layer_to_json(*rebuilt), json) << "[config] round-trip changed the config";
    rebuilt->set_declared_input_shape(spec.input_shape());
    model->add(rebuilt);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[config] layer_from_json(" << json.dump() << ") or its build threw: " << e.what();
    return Sequential(nullptr);
  }
  EXPECT_EQ(rebuilt->output_shape(), layer.output_shape()) << "[config] rebuilt output shape";
  EXPECT_EQ(rebuilt->trainable_params(), layer.trainable_params()) << "[config] rebuilt trainable params";
  EXPECT_EQ(rebuilt->non_trainable_params(), layer.non_trainable_params()) << "[config] rebuilt non-trainable";
  return model;
}

/// Check 6: `model`'s state saved with LibTorch serialization and loaded into `rebuilt` gives `y_eval` for
/// `x` in eval(), bit for bit.
inline void check_save_load(Sequential& model, Sequential& rebuilt, const at::Tensor& x, const at::Tensor& y_eval) {
  try {
    std::stringstream stream;
    torch::serialize::OutputArchive out;
    model->save(out);
    out.save_to(stream);
    torch::serialize::InputArchive in;
    in.load_from(stream);
    rebuilt->load(in);
    rebuilt->eval();
    at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(rebuilt->forward(x), y_eval)) << "[save/load] reloaded layer gives other outputs";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[save/load] threw: " << e.what();
  }
}

/// Check 9: `layer`'s Keras weights set into `rebuilt` (parameters zeroed first) give `y_eval` for `x`.
inline void check_keras_weights(const Layer& layer, Sequential& rebuilt, const at::Tensor& x,
                                const at::Tensor& y_eval) {
  if (!layer.no_keras_weights_reason().empty() && layer.count_params() > 0) return;
  try {
    std::vector<at::Tensor> weights = layer.keras_weights();
    int64_t numel = 0;
    for (const auto& w : weights) numel += w.numel();
    EXPECT_EQ(numel, layer.count_params()) << "[keras weights] keras_weights() does not cover every parameter";
    Layer& target = *rebuilt->layers().back();
    {
      at::NoGradGuard no_grad;
      for (auto& p : target.parameters(true)) p.zero_();
    }
    target.set_keras_weights(weights);
    rebuilt->eval();
    at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(rebuilt->forward(x), y_eval)) << "[keras weights] set_keras_weights(keras_weights()) "
                                                           "gives other outputs";
    weights.push_back(at::zeros({1}));
    EXPECT_THROW(target.set_keras_weights(weights), ConfigError) << "[keras weights] one weight too many accepted";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[keras weights] threw: " << e.what();
  }
}

/// Check 7: train() forward of `xg` with shape `out_t`, equal to `y_eval` (or different when
/// spec.training_changes_output()). Returns the output, or an undefined tensor when it cannot be used.
inline at::Tensor check_train_forward(Sequential& model, const at::Tensor& xg, const at::Tensor& y_eval,
                                      const LayerConformance& spec, const Shape& out_t) {
  at::Tensor y;
  try {
    model->train();
    y = model->forward(xg);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[train] forward threw: " << e.what();
    return {};
  }
  if (y.sizes().vec() != out_t) {
    ADD_FAILURE() << "[train] tensor shape: got " << y.sizes() << ", expected " << at::IntArrayRef(out_t);
    return {};
  }
  // Equal up to float rounding: a long reduction (Dense on 82,944 inputs) may be split over threads
  // differently from one forward to the next, which moves the last bits in proportion to the outputs.
  const double atol = 1e-5 * std::max(1.0, y_eval.abs().max().item<double>());
  const bool same = at::allclose(y.detach(), y_eval, /*rtol=*/1e-4, atol);
  if (spec.training_changes_output()) {
    EXPECT_FALSE(same) << "[train/eval] train() output should differ from eval() output";
  } else {
    EXPECT_TRUE(same) << "[train/eval] train() output differs from eval() output (max difference "
                      << (y.detach() - y_eval).abs().max().item<double>() << ")";
  }
  return y;
}

/// Check 8: after backward of a random projection of `y`, every trainable parameter has a non-zero
/// gradient, no non-trainable one has a gradient, and the gradient reaches the input `xg`.
inline void check_gradients(Layer& layer, const at::Tensor& xg, const at::Tensor& y, uint64_t seed,
                            bool input_grad = true) {
  at::manual_seed(seed);
  (y * at::randn_like(y)).sum().backward();
  for (const auto& p : layer.named_parameters(true)) {
    const at::Tensor& grad = p.value().grad();
    if (!p.value().requires_grad()) {
      EXPECT_FALSE(grad.defined()) << "[grad] non-trainable '" << p.key() << "' got a gradient";
    } else if (!grad.defined()) {
      ADD_FAILURE() << "[grad] no gradient reaches trainable parameter '" << p.key() << "'";
    } else {
      EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << "[grad] zero gradient for '" << p.key() << "'";
    }
  }
  if (input_grad) {
    EXPECT_TRUE(xg.grad().defined()) << "[grad] no gradient reaches the input";
  } else {
    EXPECT_FALSE(xg.grad().defined() && xg.grad().abs().sum().item<double>() > 0) << "[grad] indices got a gradient";
  }
}

}  // namespace detail

/// Runs checks 1–9 above on `layer` (freshly constructed, not yet built; its declared input shape is set
/// to spec.input_shape()). Reports failures through GoogleTest; never throws. A failure that leaves
/// nothing to test further (no build, no eval output) stops the later checks.
inline void expect_layer_conformance(std::shared_ptr<Layer> layer, const LayerConformance& spec) {
  ASSERT_TRUE(layer) << "null layer";
  SCOPED_TRACE("layer conformance of " + layer->class_name() + " for input " + format_shape(spec.input_shape()));
  // LibTorch sets its intra-op thread count at the first parallel op; fix it now, so every forward below
  // sums in the same order (a multi-threaded BLAS splits the sums by thread count).
  (void)at::get_num_threads();
  Sequential model;
  if (!detail::check_build(layer, spec, model)) return;
  detail::check_params_and_state(*layer, spec);
  at::manual_seed(spec.seed());
  const Shape x_shape = detail::batch_shape(spec.input_shape(), spec.batch_size());
  const at::Tensor x =
      spec.index_input() > 0 ? at::randint(spec.index_input(), x_shape).to(at::kFloat) : at::randn(x_shape);
  const Shape out_t = detail::batch_shape(spec.output_shape(), spec.batch_size());
  const at::Tensor y_eval = detail::check_eval_forward(model, x, out_t);
  if (!y_eval.defined()) return;
  Sequential rebuilt = detail::check_config_round_trip(*layer, spec);
  if (!rebuilt.is_empty()) detail::check_save_load(model, rebuilt, x, y_eval);
  if (!rebuilt.is_empty()) detail::check_keras_weights(*layer, rebuilt, x, y_eval);
  const at::Tensor xg = x.clone().requires_grad_(true);
  const at::Tensor y_train = detail::check_train_forward(model, xg, y_eval, spec, out_t);
  if (y_train.defined()) detail::check_gradients(*layer, xg, y_train, spec.seed() + 1, spec.index_input() == 0);
}

}  // namespace torchfit::testing
