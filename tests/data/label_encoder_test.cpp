// Tests of the label encoding (label_encoder.h) against Keras's class_mode rules (KERAS_SEMANTICS.md;
// keras-preprocessing 1.1 DirectoryIterator._get_batches_of_transformed_samples): categorical =
// one-hot float32 (N, K), sparse = the class index, binary = 0/1 float (K = 2), input = x, none = no y.
#include <gtest/gtest.h>

#include <torchfit/data/label_encoder.h>
#include <torchfit/error.h>

using namespace torchfit::data;

TEST(LabelEncoder, CategoricalIsOneHotFloat32) {
  const at::Tensor y = encode_labels(ClassMode::categorical, {2, 0, 1, 2}, 3, at::Tensor());
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  const at::Tensor expected = at::tensor({0.f, 0.f, 1.f, 1.f, 0.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 1.f}).view({4, 3});
  EXPECT_TRUE(at::equal(y, expected)) << y;
  // A class with no sample in the batch still has its column.
  EXPECT_EQ(encode_labels(ClassMode::categorical, {0}, 5, at::Tensor()).sizes(), (at::IntArrayRef{1, 5}));
}

TEST(LabelEncoder, SparseIsTheClassIndexAsInt64) {
  const at::Tensor y = encode_labels(ClassMode::sparse, {3, 0, 9}, 10, at::Tensor());
  EXPECT_EQ(y.scalar_type(), at::kLong);
  EXPECT_TRUE(at::equal(y, at::tensor({int64_t{3}, int64_t{0}, int64_t{9}}))) << y;
}

TEST(LabelEncoder, BinaryIsZeroOrOneFloatOfShapeNByOne) {
  const at::Tensor y = encode_labels(ClassMode::binary, {1, 0, 0, 1}, 2, at::Tensor());
  EXPECT_EQ(y.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(y, at::tensor({1.f, 0.f, 0.f, 1.f}).view({4, 1}))) << y;
  EXPECT_NO_THROW(check_class_count(ClassMode::binary, 2, "data/train"));
  try {
    check_class_count(ClassMode::binary, 3, "data/train");
    FAIL() << "expected ConfigError";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "class_mode \"binary\" needs exactly 2 classes, data/train has 3");
  }
  EXPECT_NO_THROW(check_class_count(ClassMode::categorical, 1, "data/train"));
}

TEST(LabelEncoder, InputCopiesTheImagesAndNoneGivesNoLabels) {
  const at::Tensor x = at::arange(2 * 3 * 2 * 2, at::kFloat).view({2, 3, 2, 2});
  const at::Tensor y = encode_labels(ClassMode::input, {0, 1}, 2, x);
  EXPECT_TRUE(at::equal(y, x));
  EXPECT_NE(y.data_ptr(), x.data_ptr()) << "a copy: a model may change its target in place";
  EXPECT_FALSE(encode_labels(ClassMode::none, {0, 1}, 2, x).defined());
  EXPECT_EQ(encode_labels(ClassMode::categorical, {}, 4, at::Tensor()).sizes(), (at::IntArrayRef{0, 4}));
}

TEST(LabelEncoder, ModeNamesAndBadInputAreErrors) {
  for (const std::string name : {"categorical", "sparse", "binary", "input", "none"})
    EXPECT_EQ(class_mode_name(parse_class_mode(name)), name);
  try {
    parse_class_mode("int");  // image_dataset_from_directory's name, not flow_from_directory's
    FAIL() << "expected ConfigError";
  } catch (const torchfit::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "class_mode must be categorical, sparse, binary, input or none, got \"int\"");
  }
  EXPECT_THROW(encode_labels(ClassMode::categorical, {0, 3}, 3, at::Tensor()), torchfit::IndexError);
  EXPECT_THROW(encode_labels(ClassMode::sparse, {-1}, 3, at::Tensor()), torchfit::IndexError);
}
