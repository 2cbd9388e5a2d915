// Image decoding (stb_image), PIL-compatible colour conversion, resizing (OpenCV), PNG encoding.
// This is the one translation unit that holds the stb_image / stb_image_write implementations.
#include <torchfit/data/image.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#define STB_IMAGE_IMPLEMENTATION
#define STBI_NO_HDR
#define STBI_NO_PSD
#define STBI_NO_PIC
#define STBI_NO_TGA
#include <stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace torchfit::data {

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

namespace {

struct File {
  std::FILE* f = nullptr;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {}
  ~File() {
    if (f) std::fclose(f);
  }
};

// Reads `len` bytes at `offset` (negative offset: from the end). Returns what could be read.
std::vector<uint8_t> read_at(std::FILE* f, long offset, size_t len, int whence) {
  std::vector<uint8_t> buf(len);
  if (std::fseek(f, offset, whence) != 0) return {};
  buf.resize(std::fread(buf.data(), 1, len, f));
  return buf;
}

bool starts_with(const std::vector<uint8_t>& b, const char* magic, size_t n) {
  return b.size() >= n && std::memcmp(b.data(), magic, n) == 0;
}

uint32_t le32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

std::vector<uint8_t> read_file(const std::string& path) {
  File file(path);
  if (!file.f) throw IoError("cannot open image " + path + ": " + std::strerror(errno));
  std::fseek(file.f, 0, SEEK_END);
  const long size = std::ftell(file.f);
  std::fseek(file.f, 0, SEEK_SET);
  if (size <= 0) throw IoError("cannot decode image " + path + ": empty file");
  std::vector<uint8_t> data(static_cast<size_t>(size));
  if (std::fread(data.data(), 1, data.size(), file.f) != data.size())
    throw IoError("cannot read image " + path + ": short read");
  return data;
}

}  // namespace

std::string check_image_file(const std::string& path) {
  File file(path);
  if (!file.f) return std::string("cannot open: ") + std::strerror(errno);
  if (std::fseek(file.f, 0, SEEK_END) != 0) return "cannot seek";
  const long size = std::ftell(file.f);
  if (size <= 0) return "empty file";
  // 64 KiB covers the headers of nearly every image, including JPEGs with EXIF blocks before SOF.
  const size_t head_len = static_cast<size_t>(std::min<long>(size, 64 * 1024));
  std::vector<uint8_t> head = read_at(file.f, 0, head_len, SEEK_SET);
  if (head.size() != head_len) return "cannot read header";

  if (starts_with(head, "II*\0", 4) || starts_with(head, "MM\0*", 4))
    return "TIFF is not supported by the decoder (stb_image)";
  const bool png = starts_with(head, "\x89PNG\r\n\x1a\n", 8);
  const bool jpeg = starts_with(head, "\xFF\xD8\xFF", 3);
  const bool bmp = starts_with(head, "BM", 2);
  const bool gif = starts_with(head, "GIF8", 4);
  const bool pnm = head.size() >= 2 && head[0] == 'P' && (head[1] == '5' || head[1] == '6');
  if (!png && !jpeg && !bmp && !gif && !pnm) return "not an image (unrecognised header)";

  // The PNG end check comes before stb's header check: how far stb_image's info call reads into a cut
  // PNG differs between its releases (Debian 13's fails on a PNG cut after IHDR, Debian 12's does
  // not), and the answer must not depend on the stb_image we were built with.
  if (png) {
    // A complete PNG ends with the IEND chunk: length 0, "IEND", CRC AE 42 60 82.
    auto tail = read_at(file.f, -12, 12, SEEK_END);
    static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    if (size < 12 + 8 || tail.size() != 12 || std::memcmp(tail.data(), iend, 12) != 0)
      return "truncated PNG (no IEND chunk at the end)";
  }
  int w = 0, h = 0, c = 0;
  int ok = stbi_info_from_memory(head.data(), static_cast<int>(head.size()), &w, &h, &c);
  if (!ok && head.size() < static_cast<size_t>(size)) {  // header beyond 64 KiB: read it all
    std::vector<uint8_t> all = read_at(file.f, 0, static_cast<size_t>(size), SEEK_SET);
    ok = stbi_info_from_memory(all.data(), static_cast<int>(all.size()), &w, &h, &c);
  }
  if (!ok || w <= 0 || h <= 0) {
    const char* why = stbi_failure_reason();
    return std::string("corrupt header (") + (why ? why : "unknown") + ")";
  }
  if (jpeg) {
    // The end-of-image marker FF D9 must be near the end (some writers append padding/trailers).
    const size_t n = static_cast<size_t>(std::min<long>(size, 4096));
    auto tail = read_at(file.f, -static_cast<long>(n), n, SEEK_END);
    bool eoi = false;
    for (size_t i = 0; i + 1 < tail.size(); ++i)
      if (tail[i] == 0xFF && tail[i + 1] == 0xD9) eoi = true;
    if (!eoi) return "truncated JPEG (no end-of-image marker)";
  } else if (bmp) {
    if (head.size() >= 6 && le32(head.data() + 2) > static_cast<uint32_t>(size))
      return "truncated BMP (file shorter than its header says)";
  }
  return "";
}

Image decode_image(const uint8_t* data, size_t size, ColorMode mode, const std::string& what, bool keep_gray) {
  if (size == 0) throw IoError("cannot decode image " + what + ": empty file");
  int w = 0, h = 0, file_c = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &file_c)) {
    const char* why = stbi_failure_reason();
    throw IoError("cannot decode image " + what + ": " + (why ? why : "unknown format"));
  }
  // What to ask stb for: it replicates gray and drops alpha exactly like PIL's convert, but its own
  // RGB→gray formula differs from PIL's, so colour → grayscale is done here.
  const bool colour_file = file_c >= 3;
  int req = 3;
  if (mode == ColorMode::rgba) req = 4;
  if (mode == ColorMode::grayscale) req = colour_file ? 3 : 1;
  if (mode == ColorMode::rgb && keep_gray && !colour_file) req = 1;  // L or LA: stb drops the alpha

  int got = 0;
  std::unique_ptr<stbi_uc, void (*)(void*)> px(stbi_load_from_memory(data, static_cast<int>(size), &w, &h, &got, req),
                                               stbi_image_free);
  if (!px) {
    const char* why = stbi_failure_reason();
    throw IoError("cannot decode image " + what + ": " + (why ? why : "corrupt data"));
  }
  if (w <= 0 || h <= 0) {  // found by tests/data/fuzz_regressions/bmp_zero_width.bmp
    throw IoError("cannot decode image " + what + ": empty image (" + std::to_string(w) + "x" + std::to_string(h) +
                  ")");
  }
  Image img;
  img.height = h;
  img.width = w;
  const size_t npx = static_cast<size_t>(w) * static_cast<size_t>(h);
  if (mode == ColorMode::grayscale && colour_file) {
    img.channels = 1;
    img.pixels.resize(npx);
    const stbi_uc* p = px.get();
    for (size_t i = 0; i < npx; ++i, p += 3)
      img.pixels[i] = static_cast<uint8_t>((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 0x8000u) >> 16);
  } else {
    img.channels = req;
    img.pixels.assign(px.get(), px.get() + npx * static_cast<size_t>(req));
  }
  return img;
}

Image load_image(const std::string& path, ColorMode mode, bool keep_gray) {
  const std::vector<uint8_t> data = read_file(path);
  return decode_image(data.data(), data.size(), mode, path, keep_gray);
}

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
}  // namespace

Image resize_image(const Image& image, int height, int width, const std::string& interpolation) {
  int flag;
  if (interpolation == "nearest")
    flag = cv::INTER_NEAREST_EXACT;
  else if (interpolation == "bilinear")
    flag = cv::INTER_LINEAR;
  else if (interpolation == "bicubic")
    flag = cv::INTER_CUBIC;
  else if (interpolation == "area")
    flag = cv::INTER_AREA;
  else
    throw ConfigError("interpolation must be nearest, bilinear, bicubic or area, got \"" + interpolation + "\"");
  if (height < 1 || width < 1)
    throw ConfigError("resize target must be at least 1x1, got " + std::to_string(height) + "x" +
                      std::to_string(width));
  if (image.height == height && image.width == width) return image;
  Image out;
  out.height = height;
  out.width = width;
  out.channels = image.channels;
  out.pixels.resize(static_cast<size_t>(height) * width * image.channels);
  if (flag == cv::INTER_NEAREST_EXACT) {
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
  const cv::Mat src(image.height, image.width, CV_8UC(image.channels), const_cast<uint8_t*>(image.pixels.data()));
  cv::Mat dst(height, width, CV_8UC(image.channels), out.pixels.data());
  cv::resize(src, dst, dst.size(), 0, 0, flag);
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
