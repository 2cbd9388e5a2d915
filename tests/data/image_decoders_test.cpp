// Tests of torchfit/data/image.h's decoders on real files written by the test: what is refused is what
// no decoder can decode (truncation found by the decoder, not by end-marker heuristics), formats stb_image
// lacks go through OpenCV with Keras's channel semantics, skip reasons name the format, and the pixel
// limit (Pillow's MAX_IMAGE_PIXELS) is read from the header.
#include <gtest/gtest.h>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include <zlib.h>
#if TORCHFIT_HAVE_IMGCODECS  // the fixtures are encoded with OpenCV (progressive JPEG, BMP, PPM, WebP, TIFF)
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "support/image_tree.h"
#include "support/temp_dir.h"

using namespace torchfit::data;
using torchfit::testing::pattern;
using torchfit::testing::TempDir;
using torchfit::testing::write_bytes;

namespace {

// OpenCV's encoder for `ext` on an RGB(A) or gray Image (OpenCV wants BGR(A)).
std::vector<uint8_t> opencv_encode(const std::string& ext, const Image& img, const std::vector<int>& params = {}) {
  cv::Mat m(img.height, img.width, CV_8UC(img.channels), const_cast<uint8_t*>(img.pixels.data()));
  cv::Mat bgr;
  if (img.channels == 3)
    cv::cvtColor(m, bgr, cv::COLOR_RGB2BGR);
  else if (img.channels == 4)
    cv::cvtColor(m, bgr, cv::COLOR_RGBA2BGRA);
  else
    bgr = m;
  std::vector<uint8_t> out;
  EXPECT_TRUE(cv::imencode(ext, bgr, out, params)) << ext;
  return out;
}

std::vector<uint8_t> cut_tail(const std::vector<uint8_t>& bytes, size_t n) {
  return std::vector<uint8_t>(bytes.begin(), bytes.end() - static_cast<long>(n));
}

// The IoError message of load_image(path), or "" when it loads.
std::string load_error(const std::string& path, int64_t max_pixels = kMaxImagePixels) {
  try {
    load_image(path, ColorMode::rgb, false, max_pixels);
  } catch (const torchfit::IoError& e) {
    return e.what();
  }
  return "";
}

// A PNG whose IHDR says width x height (CRC fixed) over the pixel data of a 1x1 PNG: the header is
// what a bomb looks like to the header check, with a few hundred bytes on disk.
std::vector<uint8_t> png_with_header_size(uint32_t width, uint32_t height) {
  std::vector<uint8_t> png = encode_png(Image{1, 1, 3, {10, 20, 30}});
  // Signature (8), IHDR length (4), "IHDR" at 12, width at 16, height at 20, CRC at 29.
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<uint8_t>(width >> (24 - 8 * i));
    png[20 + i] = static_cast<uint8_t>(height >> (24 - 8 * i));
  }
  const uLong crc = ::crc32(0L, png.data() + 12, 17);
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return png;
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

TEST(ImageDecoders, SkipReasonsNameTheFormatAndSayUnsupported) {
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

TEST(ImageDecoders, PixelLimitIsPillowsAndReadFromTheHeader) {
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

TEST(ImageDecoders, PixelLimitHoldsBeyondStbImagesOwnCap) {
  // 30000 x 30000 x 3 bytes is over stb_image's 2^30-byte cap: the IHDR size decides, not a full decode.
  TempDir d("decoders_cap");
  write_bytes(d.file("huge.png"), png_with_header_size(30000, 30000));
  EXPECT_EQ(check_image_file(d.file("huge.png")).rfind("image too large: 30000 x 30000 = 900000000 pixels", 0), 0u)
      << check_image_file(d.file("huge.png"));
}

#else
TEST(ImageDecoders, NeedOpenCvImgcodecs) { GTEST_SKIP() << "built without OpenCV imgcodecs (TORCHFIT_WITH_IMGCODECS)"; }
#endif
