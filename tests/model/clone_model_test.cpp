// clone_model and adapt_to_data: a built graph made again at other shapes, against models built directly.
#include <gtest/gtest.h>

#include <functional>

#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/merge.h>
#include <torchfit/model/clone_model.h>
#include <torchfit/model/sequential.h>
#include "support/layer_checks.h"

using namespace torchfit;
using torchfit::testing::config_error_of;

namespace clone_model_test {

// Input (H, W, 3) → conv a (relu) → Flatten ; conv b on the input → Flatten ; Concatenate → Dense(classes,
// softmax) "scores". Built in this order: a, b, the flattens, the merge, the Dense.
Model branches(int64_t size, int64_t classes) {
  auto x = Input({size, size, 3}, "image");
  auto a = Conv2D(Conv2DOptions(4, 3).activation("relu").name("a"))->call(x);
  auto b = Conv2D(Conv2DOptions(2, 1).name("b"))->call(x);
  auto fa = Flatten(FlattenOptions().name("fa"))->call(a);
  auto fb = Flatten(FlattenOptions().name("fb"))->call(b);
  auto m = Concatenate(ConcatenateOptions().name("m"))->call({fa, fb});
  auto y = Dense(DenseOptions(classes).activation("softmax").name("scores"))->call(m);
  return Model({x}, {y}, "branches");
}

Sequential chain(int64_t size, int64_t classes) {
  Sequential s("chain");
  s->add(Conv2D(Conv2DOptions(4, 3).activation("relu").input_shape(Shape{size, size, 3})));
  s->add(Flatten());
  s->add(Dense(DenseOptions(classes).activation("softmax")));
  return s;
}

void expect_same_weights(const Model& a, const Model& b) {
  const auto pa = a->named_parameters(true), pb = b->named_parameters(true);
  ASSERT_EQ(pa.size(), pb.size());
  for (const auto& p : pa) {
    ASSERT_TRUE(pb.contains(p.key())) << p.key();
    EXPECT_TRUE(at::equal(p.value(), pb[p.key()])) << p.key();
  }
}

TEST(CloneModel, AGraphClonedAtAnotherSizeDrawsTheWeightsOfADirectBuild) {
  Model small = branches(8, 3);
  at::manual_seed(7);
  Model direct = branches(12, 3);  // the reference: the same graph written for 12×12 images
  at::manual_seed(7);
  Model clone = clone_model(*small, CloneModelOptions().input_shapes({{12, 12, 3}}));
  EXPECT_EQ(clone->input_shape(), (Shape{12, 12, 3}));
  // a: 10×10×4 = 400, b: 12×12×2 = 288 → scores reads 688 features.
  EXPECT_EQ(std::dynamic_pointer_cast<DenseImpl>(clone->get_layer("scores"))->kernel.sizes(),
            (at::IntArrayRef{3, 688}));
  expect_same_weights(clone, direct);
  const at::Tensor x = at::randn({2, 3, 12, 12});
  EXPECT_TRUE(at::equal(clone->forward(x), direct->forward(x)));
  EXPECT_EQ(clone->get_layer("image")->class_name(), "InputLayer");
  // The original is untouched.
  EXPECT_EQ(small->input_shape(), (Shape{8, 8, 3}));
}

TEST(CloneModel, ASequentialStaysASequentialAndASharedLayerStaysShared) {
  Sequential s = chain(10, 2);
  at::manual_seed(3);
  Sequential direct = chain(6, 2);
  at::manual_seed(3);
  Model clone = clone_model(*s, CloneModelOptions().input_shapes({{6, 6, 3}}));
  EXPECT_NE(std::dynamic_pointer_cast<SequentialImpl>(clone.ptr()), nullptr);
  expect_same_weights(clone, direct);
  EXPECT_EQ(clone->to_json()["class_name"], "Sequential");

  auto x1 = Input({5}, "x1"), x2 = Input({5}, "x2");
  Dense shared(DenseOptions(4).name("shared"));
  auto y = Add()->call({shared->call(x1), shared->call(x2)});
  Model two({x1, x2}, {y}, "siamese");
  Model twin = clone_model(*two);
  EXPECT_EQ(twin->layers().size(), two->layers().size());
  EXPECT_EQ(twin->count_params(), 5 * 4 + 4);
  EXPECT_NE(twin->get_layer("shared").get(), two->get_layer("shared").get());  // new layers, new weights
}

TEST(CloneModel, BadInputShapesAndAnEmptyCloneFunctionAreErrors) {
  Model m = branches(8, 3);
  EXPECT_NE(config_error_of([&] {
              clone_model(*m, CloneModelOptions().input_shapes({{8, 8, 3}, {8, 8, 3}}));
            }).find("2 input shapes for the 1 inputs of 'branches'"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              clone_model(*m,
                          CloneModelOptions().clone_function([](const Layer&) { return std::shared_ptr<Layer>(); }));
            }).find("gave no layer for 'a'"),
            std::string::npos);
  // 2×2 images are too small for the 3×3 convolution: the layer is named.
  EXPECT_NE(config_error_of([&] {
              clone_model(*m, CloneModelOptions().input_shapes({{2, 2, 3}}));
            }).find("'a'"),
            std::string::npos);
}

TEST(AdaptToData, AnArchitectureFollowsTheDataAndSaysWhatChanged) {
  Sequential s = chain(10, 8);
  std::vector<std::string> changes;
  Model adapted =
      adapt_to_data(s, AdaptToDataOptions().input_shape({6, 6, 3}).classes(3).architecture_only(true), &changes);
  EXPECT_EQ(adapted->input_shape(), (Shape{6, 6, 3}));
  EXPECT_EQ(adapted->output_shape(), (Shape{3}));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0], "input_shape [10,10,3] -> [6,6,3]");
  EXPECT_EQ(changes[1], "last Dense layer 'dense' units 8 -> 3 (classes in the training data)");
  // Nothing to change: the model itself.
  Model same = adapt_to_data(adapted, AdaptToDataOptions().input_shape({6, 6, 3}).classes(3).architecture_only(true));
  EXPECT_EQ(same.get(), adapted.get());
}

TEST(AdaptToData, TrainedWeightsAreRefusedOtherShapesAndGetANewHeadAndAFrozenBase) {
  Model m = branches(8, 5);
  EXPECT_NE(config_error_of([&] {
              adapt_to_data(m, AdaptToDataOptions().input_shape({8, 8, 3}).classes(3));
            }).find("the model outputs (None, 5) and the data has 3 classes"),
            std::string::npos);
  EXPECT_NE(config_error_of([&] {
              adapt_to_data(m, AdaptToDataOptions().input_shape({9, 9, 3}).classes(5));
            }).find("the model takes inputs (None, 8, 8, 3) and the data is (None, 9, 9, 3)"),
            std::string::npos);
  std::vector<std::string> changes;
  Model tuned = adapt_to_data(m, AdaptToDataOptions().classes(3).new_head(true).freeze_base(true), &changes);
  EXPECT_EQ(tuned->output_shape(), (Shape{3}));
  // Frozen: a, b, fa, fb, m (the input layer is not counted); trainable: the new head on a's 6×6×4 = 144 and
  // b's 8×8×2 = 128 features, 272 × 3 + 3.
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1], "5 layers frozen, 819 trainable parameters left");
  EXPECT_EQ(tuned->trainable_params(), 272 * 3 + 3);
}

TEST(AdaptToData, AModelWithoutADenseHeadOrWithTwoOutputsIsRefused) {
  auto x = Input({6, 6, 3});
  auto y = GlobalAveragePooling2D(GlobalPooling2DOptions().name("gap"))->call(Conv2D(Conv2DOptions(4, 3))->call(x));
  Model pooled({x}, {y}, "pooled");
  EXPECT_NE(config_error_of([&] {
              adapt_to_data(pooled, AdaptToDataOptions().classes(3).architecture_only(true));
            }).find("the output layer 'gap' (GlobalAveragePooling2D) is not a Dense"),
            std::string::npos);
  auto z = Dense(DenseOptions(2))->call(Flatten()->call(x));
  Model two({x}, {y, z}, "two");
  EXPECT_NE(
      config_error_of([&] { adapt_to_data(two, AdaptToDataOptions().classes(3)); }).find("has 1 inputs and 2 outputs"),
      std::string::npos);
}

}  // namespace clone_model_test
