// Resizing as Keras's load_img through Pillow: PIL-exact NEAREST here, the other filters in
// data/pil_resample.cpp.
#include <torchfit/data/image.h>
#include <torchfit/error.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "data/pil_resample.h"

namespace torchfit::data {

namespace {
// PIL's NEAREST (ImagingScaleAffine): source = (int)(step/2 + k·step), accumulated in double,
// step = in/out. OpenCV's INTER_NEAREST(_EXACT) picks different pixels, so this is done here.
std::vector<int> nearest_table(int in, int out_size) {
  std::vector<int> t(static_cast<size_t>(out_size));
  const double step = static_cast<double>(in) / out_size;
  double pos = step * 0.5;
  for (int k = 0; k < out_size; ++k, pos += step) t[static_cast<size_t>(k)] = std::min(in - 1, static_cast<int>(pos));
  return t;
}

// Keras's interpolation names (load_img: nearest, bilinear, bicubic, hamming, box, lanczos) and
// torchfit's "area" (an alias of box: PIL's BOX averages the covered input area). nullopt = nearest.
std::optional<PilFilter> resize_filter_of(const std::string& interpolation) {
  if (interpolation == "nearest") return std::nullopt;
  if (interpolation == "bilinear") return PilFilter::bilinear;
  if (interpolation == "bicubic") return PilFilter::bicubic;
  if (interpolation == "box" || interpolation == "area") return PilFilter::box;
  if (interpolation == "hamming") return PilFilter::hamming;
  if (interpolation == "lanczos") return PilFilter::lanczos;
  throw ConfigError("interpolation must be nearest, bilinear, bicubic, box (alias area), hamming or lanczos, got \"" +
                    interpolation + "\"");
}

}  // namespace

Image resize_image(const Image& image, int height, int width, const std::string& interpolation) {
  const std::optional<PilFilter> filter = resize_filter_of(interpolation);
  if (height < 1 || width < 1)
    throw ConfigError("resize target must be at least 1x1, got " + std::to_string(height) + "x" +
                      std::to_string(width));
  if (image.height == height && image.width == width) return image;
  Image out;
  out.height = height;
  out.width = width;
  out.channels = image.channels;
  out.pixels.resize(static_cast<size_t>(height) * width * image.channels);
  if (filter) {
    pil_resample(image.pixels.data(), image.height, image.width, image.channels, out.pixels.data(), height, width,
                 *filter);
    return out;
  }
  const std::vector<int> ys = nearest_table(image.height, height), xs = nearest_table(image.width, width);
  const int c = image.channels;
  uint8_t* dst = out.pixels.data();
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = image.pixels.data() + static_cast<size_t>(ys[static_cast<size_t>(y)]) * image.width * c;
    for (int x = 0; x < width; ++x, dst += c)
      std::memcpy(dst, row + static_cast<size_t>(xs[static_cast<size_t>(x)]) * c, static_cast<size_t>(c));
  }
  return out;
}

void resize_to_float(const Image& image, int height, int width, const std::string& interpolation, float* out) {
  const int c = image.channels;
  if (interpolation == "nearest" && height >= 1 && width >= 1) {
    const std::vector<int> ys = nearest_table(image.height, height), xs = nearest_table(image.width, width);
    const size_t row_len = static_cast<size_t>(width) * c;
    for (int y = 0; y < height; ++y) {
      float* dst = out + static_cast<size_t>(y) * row_len;
      if (y > 0 && ys[static_cast<size_t>(y)] == ys[static_cast<size_t>(y) - 1]) {  // upscaling repeats rows
        std::memcpy(dst, dst - row_len, row_len * sizeof(float));
        continue;
      }
      const uint8_t* row = image.pixels.data() + static_cast<size_t>(ys[static_cast<size_t>(y)]) * image.width * c;
      if (c == 3) {
        for (int x = 0; x < width; ++x, dst += 3) {
          const uint8_t* px = row + 3 * static_cast<size_t>(xs[static_cast<size_t>(x)]);
          dst[0] = px[0], dst[1] = px[1], dst[2] = px[2];
        }
      } else if (c == 1) {
        for (int x = 0; x < width; ++x) dst[x] = row[xs[static_cast<size_t>(x)]];
      } else {
        for (int x = 0; x < width; ++x, dst += c)
          for (int k = 0; k < c; ++k) dst[k] = row[static_cast<size_t>(xs[static_cast<size_t>(x)]) * c + k];
      }
    }
    return;
  }
  const Image r = resize_image(image, height, width, interpolation);
  for (size_t i = 0; i < r.pixels.size(); ++i) out[i] = r.pixels[i];
}

}  // namespace torchfit::data
