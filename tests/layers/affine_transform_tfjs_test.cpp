// affine_transform against TensorFlow.js's tf.image.transform (TensorFlow's projective-transform kernel), a
// second reference next to the NumPy one: fill modes reflect, nearest and constant with both interpolations,
// on transforms reaching outside the image, within float32 rounding. Not compared: wrap (TensorFlow maps the
// continuous coordinate into the image and clamps, so across the seam it repeats the edge pixel where Keras's
// NumPy, JAX and torch backends blend the opposite edges), and samples exactly halfway between two pixels.
// Skips with the reason when node or @tensorflow/tfjs (TORCHFIT_TFJS_DIR, default /var/cache/torchfit/tfjs) is
// absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <torchfit/layers/affine_transform.h>
#include <torchfit/layers/random_rotation.h>
#include <torchfit/layers/random_shear.h>
#include <torchfit/layers/random_zoom.h>
#include "support/augmentation_checks.h"
#include "support/temp_dir.h"

using namespace torchfit;

namespace {

std::string tfjs_dir() {
  const char* d = std::getenv("TORCHFIT_TFJS_DIR");
  return d ? d : "/var/cache/torchfit/tfjs";
}

std::string tfjs_unavailable() {
  if (std::system("node --version >/dev/null 2>&1") != 0) return "node (Debian nodejs) is not installed";
  if (!std::filesystem::exists(tfjs_dir() + "/node_modules/@tensorflow/tfjs"))
    return "@tensorflow/tfjs is not installed in " + tfjs_dir() + " (npm install @tensorflow/tfjs@4.22.0 there)";
  return {};
}

// tf.image.transform of x (N, C, H, W) float32, back in (N, C, H, W).
at::Tensor tfjs_transform(const at::Tensor& x, const at::Tensor& t, const std::string& interp, const std::string& fill,
                          double fill_value) {
  const at::Tensor nhwc = x.permute({0, 2, 3, 1}).contiguous().to(at::kDouble);
  std::vector<std::vector<double>> rows;
  const at::Tensor td = t.to(at::kDouble).contiguous();
  for (int64_t i = 0; i < td.size(0); ++i) rows.emplace_back(td[i].data_ptr<double>(), td[i].data_ptr<double>() + 8);
  const nlohmann::json req = {{"x", torchfit::testing::tensor_json(nhwc)},
                              {"transforms", rows},
                              {"interpolation", interp},
                              {"fill_mode", fill},
                              {"fill_value", fill_value}};
  torchfit::testing::TempDir dir("tfjs_ref");
  const std::string in = dir.file("request.json"), out = dir.file("result.json");
  std::ofstream(in) << req.dump();
  const std::string cmd = "node '" + std::string(TORCHFIT_SOURCE_DIR) +
                          "/tests/layers/reference/tfjs_image_transform.js' '" + in + "' '" + out +
                          "' 2>/dev/null >/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << "tfjs reference failed: " << cmd;
    return {};
  }
  nlohmann::json result;
  std::ifstream(out) >> result;
  return torchfit::testing::detail::reference_tensor(result["y"]).permute({0, 3, 1, 2});
}

}  // namespace

TEST(AffineTransformTfjs, ReflectNearestAndConstantMatchTensorFlowsKernel) {
  const std::string why = tfjs_unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  at::manual_seed(2);
  const at::Tensor x = at::rand({5, 2, 5, 7}) * 10.0;
  // A shift beyond the image, a projective transform, and the layers' own rotation, zoom and shear (no sample
  // of these lies exactly halfway between two pixels).
  const at::Tensor t =
      at::cat({at::tensor({1.0, 0.0, -17.3, 0.0, 1.0, 11.6, 0.0, 0.0}).view({1, 8}).to(at::kFloat),
               at::tensor({1.1, 0.2, -0.4, -0.15, 0.95, 0.3, 0.03, -0.02}).view({1, 8}).to(at::kFloat),
               RandomRotationImpl::rotation_transforms(at::tensor({33.0}), 5, 7).to(at::kFloat),
               RandomZoomImpl::zoom_transforms(at::tensor({1.7}), at::tensor({0.6}), 5, 7).to(at::kFloat),
               RandomShearImpl::shear_transforms(at::tensor({-0.81}), at::tensor({0.93})).to(at::kFloat)});
  for (const std::string fill : {"reflect", "nearest", "constant"}) {
    for (const std::string& interp : torchfit::testing::affine_interpolations()) {
      SCOPED_TRACE(fill + " " + interp);
      const at::Tensor want = tfjs_transform(x, t, interp, fill, -2.5);
      ASSERT_TRUE(want.defined());
      torchfit::testing::expect_matches_reference(affine_transform(x, t, interp, fill, -2.5), want, 1e-4);
    }
  }
}
