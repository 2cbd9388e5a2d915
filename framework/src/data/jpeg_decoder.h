#pragma once
// JPEG decoding with libjpeg(-turbo), the library Pillow decodes JPEG with, set up as Pillow sets it
// (accurate integer IDCT, fancy upsampling), so the pixels equal Pillow's (hence Keras's load_img).
// Private to the library: image.cpp is its one user.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::data::jpeg {

/// What a JPEG decode gives: gray (channels 1) or BGR (channels 3) samples, (H, W, C) order. A CMYK or
/// YCCK file is converted to RGB as Pillow converts it (Adobe's inverted CMYK, then PIL's cmyk2rgb).
struct Decoded {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<uint8_t> pixels;
  bool truncated = false;  // the decoder ran out of data (libjpeg's "Premature end of JPEG file")
  std::string error;       // libjpeg's message when decoding failed ("" on success)
};

/// Decodes `data`. The size is read from the header first: a header of more than
/// `max_pixels` pixels (width·height; <= 0: no limit) stops there with `width`/`height` set, no
/// pixels and no error, so the caller can apply its pixel limit. Never throws for bad content
/// (std::bad_alloc may pass through).
Decoded decode(const uint8_t* data, size_t size, int64_t max_pixels);

}  // namespace torchfit::data::jpeg
