// RandomFlip (keras.layers.RandomFlip, Keras 3): in training each image is either left alone or flipped as
// the NumPy reference of Keras 3's _flip_inputs flips it for its mode (both axes together for
// "horizontal_and_vertical", Keras 3's single draw), about half of them flipped; reproducible under
// at::manual_seed; the input in inference; conformance, Keras 3 config, errors naming the layer.
#include <gtest/gtest.h>

#include <torchfit/keras/keras_json.h>
#include <torchfit/layers/random_flip.h>
#include <torchfit/model/sequential.h>
#include <torchfit/testing/layer_conformance.h>
#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::tensor_json;

namespace {

// The layer in training on x (N, C, H, W), seeded.
at::Tensor train_forward(const std::string& mode, const at::Tensor& x, uint64_t seed) {
  RandomFlip flip(RandomFlipOptions().mode(mode));
  flip->set_declared_input_shape(Shape{x.size(2), x.size(3), x.size(1)});
  Sequential m;
  m->add(flip.ptr());
  m->train();
  at::manual_seed(seed);
  return m->forward(x);
}

}  // namespace

TEST(RandomFlip, ConformanceAndKerasDefaults) {
  // 16 images: some of them flipped in train() (all 16 kept has odds 2^-16, and the seed is fixed).
  torchfit::testing::expect_layer_conformance(
      RandomFlip().ptr(),
      torchfit::testing::LayerConformance({4, 5, 3}, {4, 5, 3}).batch_size(16).training_changes_output(true));
  EXPECT_EQ(RandomFlip()->options.mode(), "horizontal_and_vertical");
  EXPECT_EQ(keras_snake_case("RandomFlip"), "random_flip");
}

TEST(RandomFlip, FlipsAsKeras3ForEachModeAboutHalfTheImages) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  at::manual_seed(3);
  const at::Tensor x = at::randn({400, 2, 3, 4});
  for (const std::string mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
    SCOPED_TRACE(mode);
    const at::Tensor y = train_forward(mode, x, 17);
    // The images left alone are x's; the reference says what the others must be.
    const at::Tensor kept = (y == x).flatten(1).all(1);
    std::vector<bool> flips;
    for (int64_t i = 0; i < x.size(0); ++i) flips.push_back(!kept[i].item<bool>());
    const at::Tensor want = torchfit::testing::keras_reference(
        {{"op", "random_flip"}, {"x", tensor_json(x)}, {"mode", mode}, {"flips", flips}});
    torchfit::testing::expect_matches_reference(y, want, 0.0);
    const double flipped = 1.0 - kept.to(at::kDouble).mean().item<double>();
    EXPECT_NEAR(flipped, 0.5, 0.08) << "share of flipped images";  // 400 draws: σ = 0.025
    EXPECT_TRUE(at::equal(train_forward(mode, x, 17), y)) << "the same seed, the same flips";
    EXPECT_FALSE(at::equal(train_forward(mode, x, 18), y)) << "another seed, other flips";
  }
}

TEST(RandomFlip, InferenceIsTheInput) {
  RandomFlip flip;
  flip->eval();
  const at::Tensor x = at::randn({3, 2, 4, 4});
  EXPECT_TRUE(at::equal(flip->forward(x), x));
}

TEST(RandomFlip, Keras3ConfigReachesTheLayer) {
  const nlohmann::json layer = {{"module", "keras.layers"},
                                {"class_name", "RandomFlip"},
                                {"registered_name", nullptr},
                                {"config",
                                 {{"name", "random_flip"},
                                  {"trainable", true},
                                  {"dtype", "float32"},
                                  {"seed", 1337},
                                  {"mode", "horizontal"},
                                  {"data_format", "channels_last"}}}};
  const Model model = model_from_json(torchfit::testing::keras3_sequential_of({5, 7, 3}, layer));
  const auto flip = std::dynamic_pointer_cast<RandomFlipImpl>(model->get_layer("random_flip"));
  ASSERT_TRUE(flip);
  EXPECT_EQ(flip->options.mode(), "horizontal");
  EXPECT_EQ(layer_to_json(*layer_from_json(layer_to_json(*flip))), layer_to_json(*flip));
}

TEST(RandomFlip, BadArgumentsAndInputsNameTheLayer) {
  try {
    RandomFlip(RandomFlipOptions().mode("diagonal").name("f"));
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'f' (RandomFlip): mode must be 'horizontal', 'vertical' or "
                                         "'horizontal_and_vertical', got 'diagonal'"),
              std::string::npos)
        << e.what();
  }
  try {
    Sequential s;
    auto f = RandomFlip(RandomFlipOptions().name("f"));
    f->set_declared_input_shape(Shape{5, 2});
    s->add(f.ptr());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'f' (RandomFlip) expects a 3-D input (H, W, C), got (None, 5, 2)"),
              std::string::npos)
        << e.what();
  }
}
