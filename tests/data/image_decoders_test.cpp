// Tests of framework/src/data/image_decoders.cpp on real files written by the test: PIL-compatible colour
// conversions, what is refused is what no decoder can decode (truncation found by the decoder, not by
// end-marker heuristics), formats stb_image lacks go through OpenCV with Keras's channel semantics.
// The header check and the pixel limit: image_header_test.cpp.
#include <gtest/gtest.h>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/image_files.h"
#include "support/image_tree.h"
#include "support/temp_dir.h"

using namespace torchfit::data;
using torchfit::testing::image_of;
using torchfit::testing::load_error;
using torchfit::testing::palette_png_with_transparency;
using torchfit::testing::pattern;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;

TEST(ImageDecoders, PngRoundTripKeepsPixels) {
  TempDir d;
  const Image img = image_of(2, 3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18});
  save_png(d.file("a.png"), img);
  const Image back = load_image(d.file("a.png"), ColorMode::rgb);
  EXPECT_EQ(back.height, 2);
  EXPECT_EQ(back.width, 3);
  EXPECT_EQ(back.channels, 3);
  EXPECT_EQ(back.pixels, img.pixels);
  EXPECT_EQ(check_image_file(d.file("a.png")), "");
}

TEST(ImageDecoders, GrayscaleReplicatedToRgbAndColourToGrayUsesPilWeights) {
  TempDir d;
  save_png(d.file("g.png"), image_of(1, 2, 1, {10, 200}));
  const Image rgb = load_image(d.file("g.png"), ColorMode::rgb);
  ASSERT_EQ(rgb.channels, 3);
  EXPECT_EQ(rgb.pixels, (std::vector<uint8_t>{10, 10, 10, 200, 200, 200}));
  // PIL: L = (19595 R + 38470 G + 7471 B + 32768) >> 16 → (255,0,0) → 76, (0,255,0) → 150, (0,0,255) → 29.
  save_png(d.file("c.png"), image_of(1, 3, 3, {255, 0, 0, 0, 255, 0, 0, 0, 255}));
  const Image gray = load_image(d.file("c.png"), ColorMode::grayscale);
  ASSERT_EQ(gray.channels, 1);
  EXPECT_EQ(gray.pixels, (std::vector<uint8_t>{76, 150, 29}));
}

TEST(ImageDecoders, RgbaAlphaIsDroppedForRgbAndKeptForRgba) {
  TempDir d;
  save_png(d.file("a.png"), image_of(1, 2, 4, {255, 0, 0, 0, 0, 255, 0, 128}));
  EXPECT_EQ(load_image(d.file("a.png"), ColorMode::rgb).pixels, (std::vector<uint8_t>{255, 0, 0, 0, 255, 0}));
  EXPECT_EQ(load_image(d.file("a.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{255, 0, 0, 0, 0, 255, 0, 128}));
  save_png(d.file("g.png"), image_of(1, 1, 1, {7}));
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{7, 7, 7, 255}));
}

TEST(ImageDecoders, PaletteWithTransparencyDecodesToPaletteColours) {
  TempDir d;
  write_bytes(d.file("p.png"), palette_png_with_transparency());
  EXPECT_EQ(check_image_file(d.file("p.png")), "");
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgb).pixels, (std::vector<uint8_t>{0, 0, 255, 255, 0, 0}));
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgba).pixels, (std::vector<uint8_t>{0, 0, 255, 255, 255, 0, 0, 0}));
}

TEST(ImageDecoders, KeepGrayReturnsOneChannelOnlyForGrayFilesInRgbMode) {
  TempDir d;
  save_png(d.file("g.png"), image_of(1, 2, 1, {10, 200}));
  save_png(d.file("la.png"), image_of(1, 2, 2, {10, 0, 200, 255}));
  save_png(d.file("c.png"), image_of(1, 1, 3, {1, 2, 3}));
  const Image g = load_image(d.file("g.png"), ColorMode::rgb, /*keep_gray=*/true);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels, (std::vector<uint8_t>{10, 200}));
  const Image la = load_image(d.file("la.png"), ColorMode::rgb, true);
  EXPECT_EQ(la.channels, 1) << "gray + alpha: alpha dropped, as PIL's LA -> RGB";
  EXPECT_EQ(la.pixels, (std::vector<uint8_t>{10, 200}));
  EXPECT_EQ(load_image(d.file("c.png"), ColorMode::rgb, true).channels, 3) << "colour files stay colour";
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgba, true).channels, 4) << "keep_gray only applies to rgb";
  EXPECT_EQ(load_image(d.file("g.png"), ColorMode::rgb, false).channels, 3);
  write_bytes(d.file("p.png"), palette_png_with_transparency());
  EXPECT_EQ(load_image(d.file("p.png"), ColorMode::rgb, true).channels, 3) << "palette files are colour";
}

#if TORCHFIT_HAVE_IMGCODECS  // the fixtures are encoded with OpenCV (progressive JPEG, BMP, PPM, WebP, TIFF)
using torchfit::testing::opencv_encode;

namespace {

std::vector<uint8_t> cut_tail(const std::vector<uint8_t>& bytes, size_t n) {
  return std::vector<uint8_t>(bytes.begin(), bytes.end() - static_cast<long>(n));
}

// PIL's L = (19595·R + 38470·G + 7471·B + 32768) >> 16 of an RGB image.
std::vector<uint8_t> pil_gray(const Image& rgb) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 2 < rgb.pixels.size(); i += 3)
    out.push_back(static_cast<uint8_t>(
        (19595u * rgb.pixels[i] + 38470u * rgb.pixels[i + 1] + 7471u * rgb.pixels[i + 2] + 0x8000u) >> 16));
  return out;
}

}  // namespace

TEST(ImageDecoders, JpegFollowedByAMotionPhotoTrailerLoads) {
  // A phone's "motion photo": the JPEG, then ~200 KB of video that holds no end-of-image marker.
  TempDir d;
  const std::vector<uint8_t> jpg = encode_jpeg(pattern(32, 32, 3));
  std::vector<uint8_t> file = jpg;
  std::mt19937 rng(7);
  for (int i = 0; i < 200 * 1024; ++i) file.push_back(static_cast<uint8_t>(rng() % 255));  // never 0xFF
  write_bytes(d.file("motion.jpg"), file);
  EXPECT_EQ(check_image_file(d.file("motion.jpg")), "");
  const Image with_trailer = load_image(d.file("motion.jpg"));
  const Image alone = decode_image(jpg.data(), jpg.size(), ColorMode::rgb);
  EXPECT_EQ(with_trailer.height, 32);
  EXPECT_EQ(with_trailer.width, 32);
  EXPECT_EQ(with_trailer.pixels, alone.pixels);
}

TEST(ImageDecoders, TruncatedFilesAreFoundByTheDecoder) {
  TempDir d;
  const Image img = pattern(24, 20, 1);
  const std::vector<uint8_t> jpg = encode_jpeg(img), png = encode_png(img);
  const std::vector<uint8_t> prog = opencv_encode(".jpg", img, {cv::IMWRITE_JPEG_PROGRESSIVE, 1});
  const std::vector<uint8_t> bmp = opencv_encode(".bmp", img), ppm = opencv_encode(".ppm", img);
  struct Case {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string reason;
  };
  // The message up to stb's own reason, which differs between stb_image releases (Debian 12 fails a
  // cut JPEG with "expected marker"; 2.30 pads it, so there is no stb reason, only ours).
  const std::string more = ": the decoder needs more data than the file holds";
  const std::vector<Case> cases = {
      {"cut.jpg", cut_tail(jpg, 40), "truncated JPEG" + more},
      {"half.jpg", cut_tail(jpg, jpg.size() / 2), "truncated JPEG" + more},
      {"eoi.jpg", cut_tail(jpg, 2), "truncated JPEG" + more},
      {"prog.jpg", cut_tail(prog, 40), "truncated JPEG" + more},
      {"half.png", cut_tail(png, png.size() / 2), "truncated PNG" + more},
      {"cut.bmp", cut_tail(bmp, 40), "truncated BMP" + more},
      {"cut.ppm", cut_tail(ppm, 40), "truncated PNM" + more},
  };
  for (const Case& c : cases) {
    write_bytes(d.file(c.name), c.bytes);
    const std::string error = load_error(d.file(c.name)),
                      want = "cannot decode image " + d.file(c.name) + ": " + c.reason;
    EXPECT_EQ(error.substr(0, want.size()), want);
    EXPECT_TRUE(error.size() == want.size() || error.substr(want.size(), 13) == " (stb_image: " ||
                error.substr(want.size(), 11) == " (libjpeg: ")
        << error;
    // The header is intact, so the header check passes; stb_image releases after Debian 12's read
    // further to answer it and then report the truncation there.
    const std::string check = check_image_file(d.file(c.name));
    EXPECT_TRUE(check.empty() || check.substr(0, c.reason.size()) == c.reason) << c.name << ": " << check;
  }
  EXPECT_EQ(load_error(d.file("cut.bmp")), "cannot decode image " + d.file("cut.bmp") + ": truncated BMP" + more);
  // The complete files decode, to the same pixels through every decoder path (BMP, PPM exactly).
  for (const auto& [name, bytes] :
       std::vector<std::pair<std::string, std::vector<uint8_t>>>{{"ok.bmp", bmp}, {"ok.ppm", ppm}, {"ok.png", png}}) {
    write_bytes(d.file(name), bytes);
    EXPECT_EQ(load_image(d.file(name)).pixels, img.pixels) << name;
  }
}

TEST(ImageDecoders, EveryCutOfAnStbFormatIsTruncatedNeverPaddedRows) {
  // At every length from 8 bytes on, a cut file never decodes (unwatched, stb pads BMP, PNM and — in
  // stb_image 2.30 — JPEG rows with zeros) and is reported as truncated — not handed to OpenCV, whose
  // libjpeg would pad it too.
  const Image img = pattern(16, 16, 2);
  struct Case {
    std::string format;
    std::vector<uint8_t> bytes;
    size_t loadable_tail;  // cuts this close to the end still hold all image data
  };
  const std::vector<Case> cases = {
      {"JPEG", encode_jpeg(img), 0},
      {"JPEG", opencv_encode(".jpg", img, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}), 0},
      {"PNG", encode_png(img), 4},  // inside the IEND chunk's CRC: Pillow loads it too
      {"BMP", opencv_encode(".bmp", img), 0},
      {"PNM", opencv_encode(".ppm", img), 0},
  };
  for (const Case& c : cases) {
    int truncated = 0;
    const std::string expected = "cannot decode image cut: truncated " + c.format + ": ";
    for (size_t n = 8; n < c.bytes.size(); ++n) {
      try {
        decode_image(c.bytes.data(), n, ColorMode::rgb, "cut");
        EXPECT_GE(n, c.bytes.size() - c.loadable_tail) << c.format << ": " << n << " bytes decoded";
      } catch (const torchfit::IoError& e) {
        EXPECT_EQ(std::string(e.what()).substr(0, expected.size()), expected) << n << ": " << e.what();
        ++truncated;
      }
    }
    EXPECT_EQ(truncated, static_cast<int>(c.bytes.size() - 8 - c.loadable_tail)) << c.format;
  }
}

TEST(ImageDecoders, WebpNamedJpgLoadsWithKerasChannels) {
  TempDir d;
  const Image img = pattern(9, 13, 4);
  write_bytes(d.file("photo.jpg"), opencv_encode(".webp", img, {cv::IMWRITE_WEBP_QUALITY, 101}));  // lossless
  EXPECT_EQ(check_image_file(d.file("photo.jpg")), "");
  const Image rgb = load_image(d.file("photo.jpg"), ColorMode::rgb);
  EXPECT_EQ(rgb.height, 9);
  EXPECT_EQ(rgb.width, 13);
  EXPECT_EQ(rgb.channels, 3);
  EXPECT_EQ(rgb.pixels, img.pixels) << "RGB order, exact (lossless WebP)";
  EXPECT_EQ(load_image(d.file("photo.jpg"), ColorMode::grayscale).pixels, pil_gray(img));
  const Image rgba = load_image(d.file("photo.jpg"), ColorMode::rgba);
  EXPECT_EQ(rgba.channels, 4);
  EXPECT_EQ(rgba.at(5, 7, 1), img.at(5, 7, 1));
  EXPECT_EQ(rgba.at(5, 7, 3), 255);

  // With alpha: rgb drops it (PIL convert("RGB")), rgba keeps it.
  Image with_alpha{2, 2, 4, {255, 0, 0, 10, 0, 255, 0, 20, 0, 0, 255, 30, 9, 9, 9, 255}};
  write_bytes(d.file("alpha.webp"), opencv_encode(".webp", with_alpha, {cv::IMWRITE_WEBP_QUALITY, 101}));
  EXPECT_EQ(load_image(d.file("alpha.webp"), ColorMode::rgba).pixels, with_alpha.pixels);
  EXPECT_EQ(load_image(d.file("alpha.webp"), ColorMode::rgb).pixels,
            (std::vector<uint8_t>{255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9}));
}

TEST(ImageDecoders, TiffDecodesThroughOpenCvAtEightBits) {
  TempDir d;
  const Image img = pattern(6, 5, 2);
  write_bytes(d.file("a.tif"), opencv_encode(".tiff", img));
  EXPECT_EQ(check_image_file(d.file("a.tif")), "");
  EXPECT_EQ(load_image(d.file("a.tif")).pixels, img.pixels);
  // 16-bit gray: the high byte, as stb_image does for 16-bit PNG; a gray file keeps one channel.
  cv::Mat g16(1, 3, CV_16UC1);
  g16.at<uint16_t>(0, 0) = 0x0000, g16.at<uint16_t>(0, 1) = 0x80FF, g16.at<uint16_t>(0, 2) = 0xFFFF;
  std::vector<uint8_t> tif16;
  ASSERT_TRUE(cv::imencode(".tiff", g16, tif16));
  write_bytes(d.file("g16.tiff"), tif16);
  const Image g = load_image(d.file("g16.tiff"), ColorMode::rgb, /*keep_gray=*/true);
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.pixels, (std::vector<uint8_t>{0x00, 0x80, 0xFF}));
  EXPECT_EQ(load_image(d.file("g16.tiff"), ColorMode::rgb).pixels,
            (std::vector<uint8_t>{0, 0, 0, 0x80, 0x80, 0x80, 0xFF, 0xFF, 0xFF}));
}

#else
TEST(ImageDecoders, NeedOpenCvImgcodecs) { GTEST_SKIP() << "built without OpenCV imgcodecs (TORCHFIT_WITH_IMGCODECS)"; }
#endif
