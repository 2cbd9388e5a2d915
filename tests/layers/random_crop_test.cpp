// RandomCrop (keras.layers.RandomCrop, Keras 3): in training one window per batch at its drawn offsets (covering
// every start over many batches, seeded), Keras 3's fallback box and resize for an image not larger on both
// axes, smart_resize in inference — each against the NumPy reference of Keras 3's _random_crop and
// get_random_transformation (TensorFlow's bilinear resize); conformance; the Keras 3 config; errors.
#include <gtest/gtest.h>

#include <set>

#include <torchfit/layers/random_crop.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/augmentation_checks.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

TEST(RandomCrop, Conformance) {
  torchfit::testing::expect_layer_conformance(
      RandomCrop(RandomCropOptions(3, 4)).ptr(),
      torchfit::testing::LayerConformance({6, 7, 2}, {3, 4, 2}).training_changes_output(true));
}

TEST(RandomCrop, WindowsFallbackAndInferenceAsKeras3) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(1);
  const at::Tensor big = at::rand({2, 2, 6, 9}, at::kDouble);
  RandomCrop crop(RandomCropOptions(3, 4));
  const nlohmann::json base = {{"x", tensor_json(big)}, {"op", "augment_crop"}, {"height", 3}, {"width", 4}};
  nlohmann::json at_window = base;
  at_window.update({{"training", true}, {"top", 2}, {"left", 5}});
  torchfit::testing::expect_matches_reference(crop->crop_at(big, 2, 5), torchfit::testing::keras_reference(at_window),
                                              1e-12);
  nlohmann::json inference = base;
  inference["training"] = false;
  crop->eval();
  torchfit::testing::expect_matches_reference(crop->forward(big), torchfit::testing::keras_reference(inference), 1e-9);
  // Not larger on both axes (8 × 16 → 10 × 8, 8 × 16 → 8 × 8, 5 × 3 → 5 × 3): Keras's fallback in training.
  for (const auto& [in, out] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{8, 16}, {10, 8}}, {{8, 16}, {8, 8}}, {{5, 3}, {5, 3}}}) {
    SCOPED_TRACE(std::to_string(in[0]) + "x" + std::to_string(in[1]));
    const at::Tensor x = at::rand({2, 3, in[0], in[1]}, at::kDouble);
    const at::Tensor y =
        torchfit::testing::seeded_train_forward(RandomCrop(RandomCropOptions(out[0], out[1])).ptr(), x, 3);
    const at::Tensor want = torchfit::testing::keras_reference(
        {{"op", "augment_crop"}, {"x", tensor_json(x)}, {"height", out[0]}, {"width", out[1]}, {"training", true}});
    torchfit::testing::expect_matches_reference(y, want, 1e-9);
  }
}

TEST(RandomCrop, DrawsEveryWindowStartSeededOnePerBatch) {
  at::manual_seed(7);
  RandomCrop crop(RandomCropOptions(3, 4));
  const at::Tensor like = at::zeros({1});
  std::set<int64_t> tops, lefts;
  for (int i = 0; i < 400; ++i) {
    const auto [top, left] = crop->draw_window(6, 9, like);
    EXPECT_TRUE(top >= 0 && top <= 3 && left >= 0 && left <= 5) << top << ", " << left;
    tops.insert(top);
    lefts.insert(left);
  }
  EXPECT_EQ(tops.size(), 4u) << "tops 0..3";
  EXPECT_EQ(lefts.size(), 6u) << "lefts 0..5";
  at::manual_seed(8);
  const at::Tensor x = at::rand({4, 2, 6, 9});
  const at::Tensor y = torchfit::testing::seeded_train_forward(RandomCrop(RandomCropOptions(3, 4)).ptr(), x, 5);
  EXPECT_TRUE(at::equal(torchfit::testing::seeded_train_forward(RandomCrop(RandomCropOptions(3, 4)).ptr(), x, 5), y));
  // One window for the batch: each image's crop is the same slice of it.
  bool found = false;
  for (int64_t t = 0; t <= 3 && !found; ++t) {
    for (int64_t l = 0; l <= 5 && !found; ++l) found = at::equal(y, x.slice(2, t, t + 3).slice(3, l, l + 4));
  }
  EXPECT_TRUE(found) << "the batch's crop is one window of every image";
}

TEST(RandomCrop, Keras3ConfigAndErrors) {
  const auto layer = torchfit::testing::layer_from_keras3<RandomCropImpl>(
      torchfit::testing::keras3_augmentation_layer("RandomCrop", "crop", {{"height", 3}, {"width", 4}}));
  ASSERT_TRUE(layer);
  EXPECT_EQ(layer->options.height(), 3);
  EXPECT_EQ(layer->options.width(), 4);
  torchfit::testing::expect_config_error([] { RandomCrop(RandomCropOptions(0, 4).name("c")); },
                                         "layer 'c' (RandomCrop): height and width must be > 0, got 0 and 4");
}
