// Tests of framework/src/data/image.cpp: the tensor layout of an Image and the encoders (the decoders,
// the header check and resizing have their own files: image_decoders_test.cpp, image_header_test.cpp,
// image_resize_test.cpp).
#include <gtest/gtest.h>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include "support/image_files.h"

using namespace torchfit::data;
using torchfit::testing::image_of;

TEST(ImageTest, ImageToTensorIsChwFloat) {
  const at::Tensor t = image_to_tensor(image_of(1, 2, 3, {1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(t.sizes(), (at::IntArrayRef{3, 1, 2}));
  EXPECT_FLOAT_EQ(t[0][0][1].item<float>(), 4.f);
  EXPECT_FLOAT_EQ(t[2][0][0].item<float>(), 3.f);
}

TEST(ImageTest, EncodersRefuseInconsistentImagesAndJpegNeedsOneOrThreeChannels) {
  EXPECT_THROW(encode_png(image_of(2, 2, 3, std::vector<uint8_t>(5, 0))), torchfit::IoError);
  EXPECT_THROW(encode_png(image_of(1, 1, 5, std::vector<uint8_t>(5, 0))), torchfit::IoError);
  EXPECT_THROW(encode_jpeg(image_of(1, 1, 4, std::vector<uint8_t>(4, 0))), torchfit::IoError);
  const std::vector<uint8_t> png = encode_png(image_of(1, 1, 3, {1, 2, 3}));
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(std::vector<uint8_t>(png.begin(), png.begin() + 8),
            (std::vector<uint8_t>{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}));  // the PNG signature
  const std::vector<uint8_t> jpg = encode_jpeg(image_of(1, 1, 3, {1, 2, 3}));
  ASSERT_GE(jpg.size(), 3u);
  EXPECT_EQ(std::vector<uint8_t>(jpg.begin(), jpg.begin() + 3), (std::vector<uint8_t>{0xFF, 0xD8, 0xFF}));
}
