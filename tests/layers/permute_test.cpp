// Permute: Keras's axis order for images and sequences against NumPy's transpose, conformance, errors.
#include <gtest/gtest.h>

#include <torchfit/layers/permute.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>

#include "support/python_reference.h"

using namespace torchfit;
using torchfit::testing::expect_layer_conformance;
using torchfit::testing::LayerConformance;

namespace {

// The layer on a batch given in Keras's order (N, d1, …): the result in Keras's order again.
at::Tensor permute_keras(const Shape& dims, const at::Tensor& keras) {
  const bool image = keras.dim() == 4;
  Sequential m;
  m->add(Permute(PermuteOptions(dims).input_shape(Shape(keras.sizes().begin() + 1, keras.sizes().end()))));
  const at::Tensor y = m->forward(image ? keras.permute({0, 3, 1, 2}).contiguous() : keras);
  return image ? y.permute({0, 2, 3, 1}) : y;
}

}  // namespace

// NumPy's transpose of the Keras-order batch by (0, dims…) — what keras.layers.Permute computes
// (keras/src/layers/reshaping/permute.py: ops.transpose(inputs, (0,) + dims)).
TEST(Permute, MatchesNumpyTransposeInKerasOrder) {
  at::manual_seed(5);
  const std::vector<std::pair<Shape, at::Tensor>> cases = {{{2, 1, 3}, at::rand({2, 3, 4, 2})},
                                                           {{3, 1, 2}, at::rand({2, 3, 4, 2})},
                                                           {{2, 3, 1}, at::rand({2, 3, 4, 2})},
                                                           {{2, 1}, at::rand({2, 5, 3})}};
  for (const auto& [dims, x] : cases) {
    const auto ref = torchfit::testing::run_python({"numpy"},
                                                   "t = numpy.transpose(numpy.array(data['x']), [0] + data['dims'])\n"
                                                   "out = {'values': t.flatten().tolist(), 'shape': list(t.shape)}",
                                                   {{"x", torchfit::testing::to_json(x)}, {"dims", dims}});
    TORCHFIT_REQUIRE_PYTHON(ref);
    const at::Tensor got = permute_keras(dims, x).contiguous();
    const at::Tensor want = at::tensor(ref.out["values"].get<std::vector<double>>())
                                .reshape(ref.out["shape"].get<std::vector<int64_t>>())
                                .to(at::kFloat);
    ASSERT_EQ(got.sizes(), want.sizes()) << format_sizes(dims);
    EXPECT_TRUE(at::equal(got, want)) << "dims " << format_sizes(dims);
  }
}

TEST(Permute, Conforms) {
  expect_layer_conformance(Permute(PermuteOptions({2, 1, 3})).ptr(), LayerConformance({3, 4, 2}, {4, 3, 2}));
  expect_layer_conformance(Permute(PermuteOptions({3, 1, 2})).ptr(), LayerConformance({3, 4, 2}, {2, 3, 4}));
  expect_layer_conformance(Permute(PermuteOptions({2, 1})).ptr(), LayerConformance({5, 3}, {3, 5}));
}

TEST(Permute, DimsThatAreNotAPermutationAreRefusedNamingThem) {
  for (const Shape& dims : {Shape{1, 1, 2}, Shape{1, 2}, Shape{0, 1, 2}, Shape{1, 2, 4}}) {
    Sequential m;
    try {
      m->add(Permute(PermuteOptions(dims).input_shape(Shape{3, 4, 2})));
      FAIL() << "dims " << format_sizes(dims) << " accepted";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(format_sizes(dims)), std::string::npos) << msg;
      EXPECT_NE(msg.find("(None, 3, 4, 2)"), std::string::npos) << msg;
    }
  }
  EXPECT_THROW(Permute(PermuteOptions(Shape{})), ConfigError);
}
