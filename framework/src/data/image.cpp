// What an Image is besides decoding, checking and resizing (image_decoders.cpp, image_header.cpp,
// image_resize.cpp): the option names, the tensor layout and the PNG/JPEG encoders (stb_image_write; the
// one translation unit that holds its implementation).
#include <torchfit/data/image.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"  // stb_image_write's only one (-Wall -Wextra)
#endif
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace torchfit::data {

SixteenBit parse_sixteen_bit(const std::string& name) {
  if (name == "high_byte") return SixteenBit::high_byte;
  if (name == "pillow") return SixteenBit::pillow;
  throw ConfigError("sixteen_bit must be \"high_byte\" or \"pillow\", got \"" + name + "\"");
}

ColorMode parse_color_mode(const std::string& name) {
  if (name == "rgb") return ColorMode::rgb;
  if (name == "grayscale") return ColorMode::grayscale;
  if (name == "rgba") return ColorMode::rgba;
  throw ConfigError("color_mode must be \"rgb\", \"grayscale\" or \"rgba\", got \"" + name + "\"");
}

int channels_of(ColorMode mode) {
  switch (mode) {
    case ColorMode::rgb:
      return 3;
    case ColorMode::grayscale:
      return 1;
    case ColorMode::rgba:
      return 4;
  }
  return 3;
}

at::Tensor image_to_tensor(const Image& image) {
  at::Tensor t = at::empty({image.channels, image.height, image.width}, at::kFloat);
  float* out = t.data_ptr<float>();
  const size_t plane = static_cast<size_t>(image.height) * image.width;
  for (size_t i = 0; i < plane; ++i)
    for (int c = 0; c < image.channels; ++c) out[c * plane + i] = image.pixels[i * image.channels + c];
  return t;
}

std::vector<uint8_t> encode_png(const Image& image) {
  if (image.channels < 1 || image.channels > 4 ||
      image.pixels.size() != static_cast<size_t>(image.height) * image.width * image.channels)
    throw IoError("cannot encode PNG: inconsistent image (" + std::to_string(image.height) + "x" +
                  std::to_string(image.width) + "x" + std::to_string(image.channels) + ")");
  int len = 0;
  unsigned char* png = stbi_write_png_to_mem(image.pixels.data(), image.width * image.channels, image.width,
                                             image.height, image.channels, &len);
  if (!png) throw IoError("cannot encode PNG (stb_image_write failed)");
  std::vector<uint8_t> out(png, png + len);
  STBIW_FREE(png);
  return out;
}

std::vector<uint8_t> encode_jpeg(const Image& image, int quality) {
  if ((image.channels != 1 && image.channels != 3) ||
      image.pixels.size() != static_cast<size_t>(image.height) * image.width * image.channels)
    throw IoError("cannot encode JPEG: needs a consistent 1- or 3-channel image");
  std::vector<uint8_t> out;
  auto sink = [](void* ctx, void* data, int size) {
    auto* v = static_cast<std::vector<uint8_t>*>(ctx);
    v->insert(v->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
  };
  if (!stbi_write_jpg_to_func(sink, &out, image.width, image.height, image.channels, image.pixels.data(), quality))
    throw IoError("cannot encode JPEG (stb_image_write failed)");
  return out;
}

void save_png(const std::string& path, const Image& image) {
  const std::vector<uint8_t> bytes = encode_png(image);
  io::write_stream_atomically(path, [&](const io::ByteSink& sink) { sink(bytes.data(), bytes.size()); });
}

}  // namespace torchfit::data
