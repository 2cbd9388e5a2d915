// PReLU: values against NumPy's max(x, 0) + alpha·min(x, 0) with Keras-order alpha and shared_axes,
// the Keras weight layout, conformance, refused shared_axes.
#include <gtest/gtest.h>

#include <torchfit/layers/advanced_activations.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/python_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

struct PReLUCase {
  Shape input;                       // Keras order
  std::optional<Shape> shared_axes;  // Keras axes
  Shape keras_alpha;                 // the Keras weight's shape
};

}  // namespace

// keras.layers.PReLU (keras/src/layers/activations/prelu.py): alpha of input_shape[1:] with the shared axes
// set to 1, relu(x) − alpha·relu(−x); here as NumPy's maximum(x, 0) + alpha·minimum(x, 0) on the batch in
// Keras's (N, H, W, C) order, alpha broadcast in Keras's order.
TEST(PReLU, MatchesNumpyWithSharedAxesInKerasOrder) {
  const std::vector<PReLUCase> cases = {{{3, 4, 2}, std::nullopt, {3, 4, 2}},
                                        {{3, 4, 2}, Shape{1, 2}, {1, 1, 2}},
                                        {{3, 4, 2}, Shape{3}, {3, 4, 1}},
                                        {{3, 4, 2}, Shape{2, 3}, {3, 1, 1}},
                                        {{5}, std::nullopt, {5}},
                                        {{5}, Shape{1}, {1}}};
  at::manual_seed(9);
  for (const auto& c : cases) {
    Shape batch = c.input;
    batch.insert(batch.begin(), 2);
    const at::Tensor x = at::rand(batch) * 2 - 1;  // Keras order
    const at::Tensor alpha = at::rand(c.keras_alpha) - 0.5;
    Sequential m;
    m->add(PReLU(PReLUOptions().shared_axes(c.shared_axes).input_shape(c.input)));
    auto layer = m->layers()[0];
    ASSERT_EQ(layer->keras_weights().at(0).sizes(), at::IntArrayRef(c.keras_alpha)) << format_shape(c.input);
    layer->set_keras_weights({alpha});
    EXPECT_TRUE(at::equal(layer->keras_weights().at(0), alpha)) << "Keras weights do not round-trip";
    const bool image = x.dim() == 4;
    at::Tensor y = m->forward(image ? x.permute({0, 3, 1, 2}).contiguous() : x);
    if (image) y = y.permute({0, 2, 3, 1});
    const auto ref = torchfit::testing::run_python(
        {"numpy"},
        "x = numpy.array(data['x']); a = numpy.array(data['alpha'])\n"
        "out = (numpy.maximum(x, 0) + a * numpy.minimum(x, 0)).flatten().tolist()",
        {{"x", torchfit::testing::to_json(x)}, {"alpha", torchfit::testing::to_json(alpha)}});
    TORCHFIT_REQUIRE_PYTHON(ref);
    const at::Tensor want = at::tensor(ref.out.get<std::vector<double>>()).to(at::kFloat);
    EXPECT_LE((y.contiguous().flatten() - want).abs().max().item<double>(), 1e-6) << format_shape(c.input);
  }
}

TEST(PReLU, Conforms) {
  expect_layer_conformance(PReLU().ptr(), LayerConformance({3, 4, 2}, {3, 4, 2}).trainable_params(24));
  expect_layer_conformance(PReLU(PReLUOptions().shared_axes(Shape{1, 2})).ptr(),
                           LayerConformance({3, 4, 2}, {3, 4, 2}).trainable_params(2));
  expect_layer_conformance(PReLU().ptr(), LayerConformance({7}, {7}).trainable_params(7));
  Sequential m;
  m->add(PReLU(PReLUOptions().input_shape(Shape{3})));
  EXPECT_EQ(m->layers()[0]->name(), "p_re_lu");                                   // Keras's to_snake_case("PReLU")
  EXPECT_TRUE(at::equal(m->layers()[0]->keras_weights().at(0), at::zeros({3})));  // alpha_initializer zeros
}

TEST(PReLU, SharedAxesOutsideTheInputAreRefusedNamingTheLayer) {
  for (const Shape& axes : {Shape{0}, Shape{4}, Shape{-1}, Shape{1, 5}}) {
    Sequential m;
    try {
      m->add(PReLU(PReLUOptions().shared_axes(axes).name("pr").input_shape(Shape{3, 4, 2})));
      FAIL() << "shared_axes " << format_sizes(axes) << " accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("layer 'pr' (PReLU): shared_axes " + format_sizes(axes)), std::string::npos) << msg;
      EXPECT_NE(msg.find("(None, 3, 4, 2)"), std::string::npos) << msg;
    }
  }
}
