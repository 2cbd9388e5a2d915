// affine_transform (Keras 3's ops.image.affine_transform): every fill mode and both interpolations against the
// float64 NumPy reference written from Keras 3's NumPy backend (keras_image_augmentation_reference.py: padding
// then scipy's map_coordinates), on transforms that reach far outside the image (several periods of wrap and
// reflect), a projective one (TensorFlow's division by k), float32 images, and CPU against CUDA.
#include <gtest/gtest.h>

#include <torchfit/layers/affine_transform.h>
#include <torchfit/layers/random_rotation.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

// Three transforms: a rotation with shift and scale, a large shift (beyond two periods of the image), and a
// projective one.
at::Tensor affine_test_transforms() {
  return at::tensor({0.8, -0.45, 1.3,   0.5,   0.9,  -0.7, 0.0,  0.0,     //
                     1.0, 0.0,   -17.3, 0.0,   1.0,  11.6, 0.0,  0.0,     //
                     1.1, 0.2,   -0.4,  -0.15, 0.95, 0.3,  0.03, -0.02},  //
                    at::kDouble)
      .view({3, 8});
}

at::Tensor affine_reference(const at::Tensor& x, const at::Tensor& t, const std::string& interp,
                            const std::string& fill, double fill_value) {
  std::vector<std::vector<double>> rows;
  for (int64_t i = 0; i < t.size(0); ++i) {
    const at::Tensor r = t[i].contiguous();
    rows.emplace_back(r.data_ptr<double>(), r.data_ptr<double>() + 8);
  }
  return torchfit::testing::keras_reference({{"op", "augment_affine"},
                                             {"x", tensor_json(x)},
                                             {"transforms", rows},
                                             {"interpolation", interp},
                                             {"fill_mode", fill},
                                             {"fill_value", fill_value}});
}

}  // namespace

TEST(AffineTransform, EveryFillModeAndInterpolationMatchesKeras3sNumPyBackend) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(2);
  const at::Tensor x = at::rand({3, 2, 5, 7}, at::kDouble) * 10.0;
  const at::Tensor t = affine_test_transforms();
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      const at::Tensor y = affine_transform(x, t, interp, fill, -2.5);
      torchfit::testing::expect_matches_reference(y, affine_reference(x, t, interp, fill, -2.5), 1e-9);
    }
  }
}

TEST(AffineTransform, Float32ImagesAndOneTransformForAll) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(3);
  const at::Tensor x = at::rand({2, 3, 6, 4});
  const at::Tensor t = affine_test_transforms()[0];
  const at::Tensor y = affine_transform(x, t, "bilinear", "reflect", 0.0);
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  torchfit::testing::expect_matches_reference(
      y, affine_reference(x.to(at::kDouble), t.unsqueeze(0).expand({2, 8}), "bilinear", "reflect", 0.0), 1e-5);
}

TEST(AffineTransform, IdentityIsTheInputAndBadArgumentsAreNamed) {
  const at::Tensor x = at::rand({2, 1, 3, 4});
  const at::Tensor id = at::tensor({1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0});
  for (const std::string& interp : torchfit::testing::affine_interpolations()) {
    EXPECT_TRUE(at::allclose(affine_transform(x, id, interp, "constant", 0.0), x)) << interp;
  }
  EXPECT_THROW(affine_transform(x, id, "bicubic", "constant", 0.0), std::invalid_argument);
  EXPECT_THROW(affine_transform(x, id, "bilinear", "mirror", 0.0), std::invalid_argument);
  EXPECT_THROW(affine_transform(x, at::zeros({3, 8}), "bilinear", "constant", 0.0), std::invalid_argument);
  try {
    affine_transform(x, id, "bilinear", "mirror", 0.0);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("got 'mirror'"), std::string::npos) << e.what();
  }
}

TEST(AffineTransform, CudaMatchesCpu_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  at::manual_seed(4);
  const at::Tensor x = at::rand({3, 3, 9, 11});
  const at::Tensor t = affine_test_transforms().to(at::kFloat);
  for (const std::string& fill : torchfit::testing::affine_fill_modes()) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      const at::Tensor cpu = affine_transform(x, t, interp, fill, 0.5);
      const at::Tensor gpu = affine_transform(x.cuda(), t.cuda(), interp, fill, 0.5);
      EXPECT_TRUE(gpu.is_cuda());
      EXPECT_TRUE(at::allclose(gpu.cpu(), cpu, 1e-5, 1e-5));
    }
  }
}

TEST(AffineTransform, HalfAndBfloat16ImagesAreResampledInFloat32AndKeepTheirDtype) {
  at::manual_seed(5);
  const at::Tensor x = at::rand({2, 3, 6, 5});
  const at::Tensor t = affine_test_transforms()[0];
  const at::Tensor want = affine_transform(x, t, "bilinear", "reflect", 0.0);
  for (const auto dtype : {at::kHalf, at::kBFloat16}) {
    const at::Tensor y = affine_transform(x.to(dtype), t, "bilinear", "reflect", 0.0);
    EXPECT_EQ(y.scalar_type(), dtype);
    // The input's and output's roundings only: bfloat16 keeps 8 bits of mantissa, half 11.
    EXPECT_TRUE(at::allclose(y.to(at::kFloat), want, 0.0, dtype == at::kHalf ? 2e-3 : 1.6e-2)) << dtype;
  }
}

TEST(AffineTransform, LayersDrawTheSameOnCudaAsOnCpu_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const at::Tensor x = at::rand({4, 3, 6, 5});
  const auto cpu = torchfit::testing::seeded_train_forward(RandomRotation(RandomRotationOptions(0.3)).ptr(), x, 11);
  auto layer = RandomRotation(RandomRotationOptions(0.3));
  layer->to(at::kCUDA);
  const auto gpu = torchfit::testing::seeded_train_forward(layer.ptr(), x.cuda(), 11);
  EXPECT_TRUE(gpu.is_cuda());
  EXPECT_TRUE(at::allclose(gpu.cpu(), cpu, 1e-5, 1e-5)) << "the draws come from the CPU generator on both";
}
