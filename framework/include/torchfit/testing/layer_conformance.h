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
///  7. train vs eval: train() output equals eval() output (default), or differs when
///     training_changes_output(true) (Dropout, BatchNormalization);
///  8. gradients: after a backward pass every trainable parameter has a defined, non-zero gradient,
///     non-trainable ones get none, and the gradient reaches the input.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

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
  /// Skip check 7 (train vs eval) altogether. Default false.
  TORCH_ARG(bool, skip_train_eval) = false;
  /// Accept buffers (state the checkpoints do not carry; see check 3). Default false.
  TORCH_ARG(bool, allow_buffers) = false;
  /// Batch size of the random input (≥ 2). Default 4.
  TORCH_ARG(int64_t, batch_size) = 4;
  /// Seed of the random input. Default 0.
  TORCH_ARG(uint64_t, seed) = 0;
};

/// Runs checks 1–8 above on `layer` (freshly constructed, not yet built; its declared input shape is set
/// to spec.input_shape()). Reports failures through GoogleTest; never throws.
inline void expect_layer_conformance(std::shared_ptr<Layer> layer, const LayerConformance& spec) {
  ASSERT_TRUE(layer) << "null layer";
  SCOPED_TRACE("layer conformance of " + layer->class_name() + " for input " + format_shape(spec.input_shape()));
  // 1. build
  layer->set_declared_input_shape(spec.input_shape());
  Sequential model;
  try {
    model->add(layer);
  } catch (const std::exception& e) {
    FAIL() << "[build] " << e.what();
  }
  EXPECT_EQ(format_shape(layer->output_shape()), format_shape(spec.output_shape())) << "[build] output shape";
  // 2. parameter counts
  EXPECT_EQ(layer->trainable_params(), spec.trainable_params()) << "[params] trainable";
  EXPECT_EQ(layer->non_trainable_params(), spec.non_trainable_params()) << "[params] non-trainable";
  EXPECT_EQ(layer->count_params(), spec.trainable_params() + spec.non_trainable_params()) << "[params] total";
  // 3. state in parameters
  if (!spec.allow_buffers()) {
    for (const auto& b : layer->named_buffers(true)) {
      ADD_FAILURE() << "[state] buffer '" << b.key() << "': checkpoints carry parameters only; register it "
                    << "with register_parameter(name, tensor, /*requires_grad=*/false)";
    }
  }
  // 4. forward shape, finiteness, deterministic eval
  at::manual_seed(spec.seed());
  Shape in_t = to_tensor_shape(spec.input_shape());
  in_t.insert(in_t.begin(), spec.batch_size());
  Shape out_t = to_tensor_shape(spec.output_shape());
  out_t.insert(out_t.begin(), spec.batch_size());
  const at::Tensor x = at::randn(in_t);
  at::Tensor y_eval;
  try {
    model->eval();
    at::NoGradGuard no_grad;
    y_eval = model->forward(x).clone();
    const at::Tensor again = model->forward(x);
    EXPECT_TRUE(at::equal(y_eval, again)) << "[eval] two eval() forwards differ";
  } catch (const std::exception& e) {
    FAIL() << "[eval] forward threw: " << e.what();
  }
  ASSERT_EQ(y_eval.sizes().vec(), out_t) << "[eval] tensor shape (N, C, H, W) / (N, D)";
  EXPECT_TRUE(at::isfinite(y_eval).all().item<bool>()) << "[eval] non-finite output";
  // 5. config round-trip
  const nlohmann::json json = layer_to_json(*layer);
  std::shared_ptr<Layer> rebuilt;
  try {
    rebuilt = layer_from_json(json);
  } catch (const std::exception& e) {
    FAIL() << "[config] layer_from_json(" << json.dump() << ") threw: " << e.what();
  }
  EXPECT_EQ(layer_to_json(*rebuilt), json) << "[config] round-trip changed the config";
  Sequential model2;
  try {
    rebuilt->set_declared_input_shape(spec.input_shape());
    model2->add(rebuilt);
  } catch (const std::exception& e) {
    FAIL() << "[config] the rebuilt layer does not build: " << e.what();
  }
  EXPECT_EQ(rebuilt->output_shape(), layer->output_shape()) << "[config] rebuilt output shape";
  EXPECT_EQ(rebuilt->trainable_params(), layer->trainable_params()) << "[config] rebuilt trainable params";
  EXPECT_EQ(rebuilt->non_trainable_params(), layer->non_trainable_params()) << "[config] rebuilt non-trainable";
  // 6. save/load through LibTorch serialization
  try {
    std::stringstream stream;
    torch::serialize::OutputArchive out;
    model->save(out);
    out.save_to(stream);
    torch::serialize::InputArchive in;
    in.load_from(stream);
    model2->load(in);
    model2->eval();
    at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(model2->forward(x), y_eval)) << "[save/load] reloaded layer gives other outputs";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "[save/load] threw: " << e.what();
  }
  // 7. train vs eval, 8. gradients
  model->train();
  const at::Tensor xg = x.clone().requires_grad_(true);
  at::Tensor y_train;
  try {
    y_train = model->forward(xg);
  } catch (const std::exception& e) {
    FAIL() << "[train] forward threw: " << e.what();
  }
  ASSERT_EQ(y_train.sizes().vec(), out_t) << "[train] tensor shape";
  if (!spec.skip_train_eval()) {
    const bool same = at::allclose(y_train.detach(), y_eval, 1e-5, 1e-6);
    if (spec.training_changes_output()) {
      EXPECT_FALSE(same) << "[train/eval] train() output should differ from eval() output";
    } else {
      EXPECT_TRUE(same) << "[train/eval] train() output differs from eval() output";
    }
  }
  at::manual_seed(spec.seed() + 1);
  (y_train * at::randn_like(y_train)).sum().backward();
  for (const auto& p : layer->named_parameters(true)) {
    if (p.value().requires_grad()) {
      if (!p.value().grad().defined()) {
        ADD_FAILURE() << "[grad] no gradient reaches trainable parameter '" << p.key() << "'";
      } else {
        EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << "[grad] zero gradient for '" << p.key() << "'";
      }
    } else {
      EXPECT_FALSE(p.value().grad().defined()) << "[grad] non-trainable '" << p.key() << "' got a gradient";
    }
  }
  EXPECT_TRUE(xg.grad().defined()) << "[grad] no gradient reaches the input";
}

}  // namespace torchfit::testing
