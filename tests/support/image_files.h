#pragma once
// Image files for the decoder and header-check tests: hand-built PNGs (a palette with transparency, a
// header that claims any size), OpenCV-encoded fixtures and the load error of a file.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#if TORCHFIT_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#endif

#include <gtest/gtest.h>

#include <torchfit/data/image.h>
#include <torchfit/error.h>

namespace torchfit::testing {

/// An Image of h×w×c with these pixels (row-major, channels last).
inline data::Image image_of(int h, int w, int c, std::vector<uint8_t> px) {
  return data::Image{h, w, c, std::move(px)};
}

/// Appends a PNG chunk (length, type, data, CRC-32 by zlib) to `png`.
inline void append_png_chunk(std::vector<uint8_t>& png, const char* type, const std::vector<uint8_t>& data) {
  const uint32_t n = static_cast<uint32_t>(data.size());
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(n >> s));
  std::vector<uint8_t> td(type, type + 4);
  td.insert(td.end(), data.begin(), data.end());
  png.insert(png.end(), td.begin(), td.end());
  const uLong c = ::crc32(0L, td.data(), static_cast<uInt>(td.size()));
  for (int s = 24; s >= 0; s -= 8) png.push_back(static_cast<uint8_t>(c >> s));
}

/// A palette PNG (colour type 3) with a tRNS chunk, 2×1 pixels: index 0 = opaque blue,
/// index 1 = fully transparent red. Built by hand (stored deflate block) since stb cannot write it.
inline std::vector<uint8_t> palette_png_with_transparency() {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  append_png_chunk(png, "IHDR", {0, 0, 0, 2, 0, 0, 0, 1, 8, 3, 0, 0, 0});
  append_png_chunk(png, "PLTE", {0, 0, 255, 255, 0, 0});
  append_png_chunk(png, "tRNS", {255, 0});
  const std::vector<uint8_t> raw = {0 /*filter*/, 0, 1};
  std::vector<uint8_t> z = {0x78, 0x01, 0x01, 3, 0, 0xFC, 0xFF};
  z.insert(z.end(), raw.begin(), raw.end());
  uint32_t a = 1, b = 0;
  for (uint8_t v : raw) a = (a + v) % 65521, b = (b + a) % 65521;
  const uint32_t adler = (b << 16) | a;
  for (int s = 24; s >= 0; s -= 8) z.push_back(static_cast<uint8_t>(adler >> s));
  append_png_chunk(png, "IDAT", z);
  append_png_chunk(png, "IEND", {});
  return png;
}

/// A PNG whose IHDR says width x height (CRC fixed) over the pixel data of a 1x1 PNG: the header is
/// what a bomb looks like to the header check, with a few hundred bytes on disk.
inline std::vector<uint8_t> png_with_header_size(uint32_t width, uint32_t height) {
  std::vector<uint8_t> png = data::encode_png(data::Image{1, 1, 3, {10, 20, 30}});
  // Signature (8), IHDR length (4), "IHDR" at 12, width at 16, height at 20, CRC at 29.
  for (int i = 0; i < 4; ++i) {
    png[16 + i] = static_cast<uint8_t>(width >> (24 - 8 * i));
    png[20 + i] = static_cast<uint8_t>(height >> (24 - 8 * i));
  }
  const uLong crc = ::crc32(0L, png.data() + 12, 17);
  for (int i = 0; i < 4; ++i) png[29 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  return png;
}

/// The IoError message of load_image(path), or "" when it loads.
inline std::string load_error(const std::string& path, int64_t max_pixels = data::kMaxImagePixels) {
  try {
    data::load_image(path, data::ColorMode::rgb, false, max_pixels);
  } catch (const torchfit::IoError& e) {
    return e.what();
  }
  return "";
}

#if TORCHFIT_HAVE_IMGCODECS
/// OpenCV's encoder for `ext` on an RGB(A) or gray Image (OpenCV wants BGR(A)).
inline std::vector<uint8_t> opencv_encode(const std::string& ext, const data::Image& img,
                                          const std::vector<int>& params = {}) {
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
#endif

}  // namespace torchfit::testing
