#pragma once
// What the image decoders (image_decoders.cpp) and the header check (image_header.cpp) share: the format
// named by a file's magic number, and decoding with the reason thrown (no file name).
#include <cstddef>
#include <cstdint>
#include <string>

#include <torchfit/data/image.h>

namespace torchfit::data::detail {

/// A file format named by its magic number.
struct Format {
  std::string name;        ///< "" when no signature matches
  bool decodable = false;  ///< false: neither stb_image nor Debian's OpenCV (by default) decodes it
};

/// The format whose signature `p` (n bytes: the file's start) carries, as the decoders themselves test
/// it (stb_image, OpenCV's imgcodecs, Pillow's plugins).
Format sniff_format(const uint8_t* p, size_t n);
/// "not an image (unrecognised header)" or "unsupported format X (neither stb_image nor OpenCV decodes it)".
std::string undecodable_reason(const Format& f);
/// "W x H = N pixels".
std::string size_text(int64_t w, int64_t h);

/// What the caller asked for: the settings of decode_image.
struct DecodeSettings {
  ColorMode mode = ColorMode::rgb;
  bool keep_gray = false;
  int64_t max_pixels = kMaxImagePixels;
  SixteenBit sixteen_bit = SixteenBit::high_byte;
};

/// stb_image's header query (stbi_info_from_memory): width, height and channels when it reads the
/// header of `data`.
bool stb_header_info(const uint8_t* data, size_t size, int& w, int& h, int& channels);

/// decode_image without the file name: throws std::runtime_error with the reason.
Image decode_or_throw(const uint8_t* data, size_t size, const DecodeSettings& s);

}  // namespace torchfit::data::detail
