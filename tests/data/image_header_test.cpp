// Tests of framework/src/data/image_header.cpp: check_image_file names what is wrong with a file from its
// header (format, size, Pillow's pixel limit) without decoding where the header tells.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include "support/image_files.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"

using namespace torchfit::data;
using torchfit::testing::image_of;
using torchfit::testing::load_error;
using torchfit::testing::pattern;
using torchfit::testing::png_with_header_size;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;

TEST(ImageHeader, HeaderCheckNamesTheProblem) {
  TempDir d;
  write_bytes(d.file("empty.png"), {});
  EXPECT_EQ(check_image_file(d.file("empty.png")), "empty file");
  std::ofstream(d.file("text.jpg")) << "this is not a picture\n";
  EXPECT_EQ(check_image_file(d.file("text.jpg")), "not an image (unrecognised header)");
  std::vector<uint8_t> png = encode_png(image_of(8, 8, 3, std::vector<uint8_t>(192, 100)));
  write_bytes(d.file("cut.png"), std::vector<uint8_t>(png.begin(), png.begin() + static_cast<long>(png.size() / 2)));
  // The header is intact: truncation is the decoder's finding (tests/data/image_decoders_test.cpp). Debian
  // 12's stb_image (2.28) reads only IHDR for the header check; Debian 13's (2.30) reads on and finds it.
  const std::string cut = check_image_file(d.file("cut.png"));
  EXPECT_TRUE(cut.empty() || cut.rfind("truncated PNG: the decoder needs more data", 0) == 0) << cut;
  EXPECT_THROW(load_image(d.file("cut.png")), torchfit::IoError);
  std::vector<uint8_t> jpg = encode_jpeg(image_of(16, 16, 3, std::vector<uint8_t>(768, 90)));
  EXPECT_GT(jpg.size(), 100u);
  write_bytes(d.file("ok.jpg"), jpg);
  EXPECT_EQ(check_image_file(d.file("ok.jpg")), "");
  write_bytes(d.file("t.tif"), {'I', 'I', '*', 0, 8, 0, 0, 0});
  EXPECT_EQ(check_image_file(d.file("t.tif")),
            "cannot decode TIFF: OpenCV failed (the file is corrupt, or a TIFF variant OpenCV does not support)");
  EXPECT_NE(check_image_file(d.file("missing.png")).find("cannot open"), std::string::npos);
  EXPECT_THROW(load_image(d.file("text.jpg")), torchfit::IoError);
  try {
    load_image(d.file("empty.png"));
    FAIL() << "no exception";
  } catch (const torchfit::IoError& e) {
    EXPECT_NE(std::string(e.what()).find("empty.png"), std::string::npos) << e.what();
  }
}

#if TORCHFIT_HAVE_IMGCODECS  // fixtures encoded with OpenCV (WebP)
using torchfit::testing::opencv_encode;

TEST(ImageHeader, SkipReasonsNameTheFormatAndSayUnsupported) {
  TempDir d;
  std::vector<uint8_t> heic = {0, 0, 0, 24, 'f', 't', 'y', 'p', 'h', 'e', 'i', 'c', 0, 0, 0, 0};
  heic.resize(400, 0);
  write_bytes(d.file("IMG_0001.jpg"), heic);
  const std::string unsupported = "unsupported format HEIF/HEIC (neither stb_image nor OpenCV decodes it)";
  EXPECT_EQ(check_image_file(d.file("IMG_0001.jpg")), unsupported);
  EXPECT_EQ(load_error(d.file("IMG_0001.jpg")), "cannot decode image " + d.file("IMG_0001.jpg") + ": " + unsupported);

  std::vector<uint8_t> webp = {'R', 'I', 'F', 'F', 60, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', ' '};
  webp.resize(68, 0x5A);
  write_bytes(d.file("bad.jpg"), webp);
  EXPECT_EQ(check_image_file(d.file("bad.jpg")),
            "cannot decode WebP: OpenCV failed (the file is corrupt, or a WebP variant OpenCV does not support)");

  std::vector<uint8_t> png = encode_png(pattern(8, 8, 1));
  const size_t idat = std::string(png.begin(), png.end()).find("IDAT");
  png[idat + 4] = png[idat + 5] = 0xFF;  // broken zlib header inside IDAT
  write_bytes(d.file("broken.png"), png);
  EXPECT_EQ(load_error(d.file("broken.png")), "cannot decode image " + d.file("broken.png") +
                                                  ": corrupt PNG (stb_image: bad zlib header; OpenCV cannot "
                                                  "decode it either)");
  write_bytes(d.file("notes.png"), {'h', 'e', 'l', 'l', 'o', '\n'});
  EXPECT_EQ(check_image_file(d.file("notes.png")), "not an image (unrecognised header)");
}

TEST(ImageHeader, PixelLimitIsPillowsAndReadFromTheHeader) {
  EXPECT_EQ(kMaxImagePixels, 89478485);  // Pillow's Image.MAX_IMAGE_PIXELS = 1024 * 1024 * 1024 // 4 // 3
  TempDir d;
  write_bytes(d.file("huge.png"), png_with_header_size(14000, 13000));
  const std::string too_big =
      "image too large: 14000 x 13000 = 182000000 pixels, limit 178956970 (twice max_image_pixels 89478485, as "
      "Pillow's DecompressionBombError)";
  EXPECT_EQ(check_image_file(d.file("huge.png")), too_big);
  EXPECT_EQ(load_error(d.file("huge.png")), "cannot decode image " + d.file("huge.png") + ": " + too_big);
  EXPECT_EQ(check_image_file(d.file("huge.png"), 0), "") << "0 = no limit (Pillow's None)";

  // Above max_image_pixels but not twice it: loaded, with a warning naming the file.
  write_bytes(d.file("big.png"), png_with_header_size(10000, 9000));
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(check_image_file(d.file("big.png")), "");
  const std::string out = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("image " + d.file("big.png") +
                     " is large: 10000 x 9000 = 90000000 pixels, above "
                     "max_image_pixels 89478485"),
            std::string::npos)
      << out;

  // Decoding checks it too, for stb formats and for those OpenCV decodes.
  const Image img = pattern(10, 10, 0);
  write_bytes(d.file("ten.png"), encode_png(img));
  write_bytes(d.file("ten.webp"), opencv_encode(".webp", img, {cv::IMWRITE_WEBP_QUALITY, 101}));
  for (const std::string name : {"ten.png", "ten.webp"}) {
    EXPECT_EQ(load_error(d.file(name), 49), "cannot decode image " + d.file(name) +
                                                ": image too large: 10 x 10 = 100 pixels, limit 98 (twice "
                                                "max_image_pixels 49, as Pillow's DecompressionBombError)");
    EXPECT_EQ(load_error(d.file(name), 50), "") << name << ": 100 pixels <= twice 50";
    EXPECT_EQ(check_image_file(d.file(name), 49).substr(0, 40), "image too large: 10 x 10 = 100 pixels, l");
  }
  EXPECT_EQ(pixel_limit_reason(14000, 13000, 0), "");
}

TEST(ImageHeader, PixelLimitHoldsBeyondStbImagesOwnCap) {
  // 30000 x 30000 x 3 bytes is over stb_image's 2^30-byte cap: the IHDR size decides, not a full decode.
  TempDir d("decoders_cap");
  write_bytes(d.file("huge.png"), png_with_header_size(30000, 30000));
  EXPECT_EQ(check_image_file(d.file("huge.png")).rfind("image too large: 30000 x 30000 = 900000000 pixels", 0), 0u)
      << check_image_file(d.file("huge.png"));
}
#endif
