// Image decoding: libjpeg for JPEG (Pillow's decoder), stb_image for PNG, GIF, BMP and binary PNM (its
// reads watched, so that a truncated file is told from a corrupt one), OpenCV's imgcodecs for the formats
// and variants stb_image lacks; PIL-compatible colour conversion; the 16-bit rules. The one translation
// unit that holds the stb_image implementation.
#include "data/image_codec.h"

#include <torchfit/error.h>

#include "data/jpeg_decoder.h"

#if TORCHFIT_HAVE_IMGCODECS
#include <opencv2/imgcodecs.hpp>
#endif
#include <opencv2/core.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

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
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

namespace torchfit::data {
namespace detail {
namespace {

struct Signature {
  const char* name;
  size_t offset;
  const char* magic;
  size_t len;
  bool decodable;  // false: neither stb_image nor Debian's OpenCV (by default) decodes it
};

// Magic numbers as the decoders themselves test them (stb_image, OpenCV's imgcodecs, Pillow's plugins).
const Signature kSignatures[] = {
    {"PNG", 0, "\x89PNG\r\n\x1a\n", 8, true},
    {"JPEG", 0, "\xFF\xD8\xFF", 3, true},
    {"GIF", 0, "GIF8", 4, true},
    {"BMP", 0, "BM", 2, true},
    {"TIFF", 0, "II*\0", 4, true},
    {"TIFF", 0, "MM\0*", 4, true},
    {"WebP", 8, "WEBP", 4, true},  // after "RIFF" + size (checked below)
    {"JPEG 2000", 0, "\0\0\0\x0CjP  \r\n\x87\n", 12, true},
    {"JPEG 2000", 0, "\xFF\x4F\xFF\x51", 4, true},
    {"Sun raster", 0, "\x59\xA6\x6A\x95", 4, true},
    {"Radiance HDR", 0, "#?RADIANCE", 10, true},
    {"Radiance HDR", 0, "#?RGBE", 6, true},
    {"PFM", 0, "PF\n", 3, true},
    {"PFM", 0, "Pf\n", 3, true},
    {"OpenEXR", 0, "\x76\x2F\x31\x01", 4, false},  // OpenCV reads it only with OPENCV_IO_ENABLE_OPENEXR
    {"HEIF/HEIC", 4, "ftypheic", 8, false},
    {"HEIF/HEIC", 4, "ftypheix", 8, false},
    {"HEIF/HEIC", 4, "ftypmif1", 8, false},
    {"AVIF", 4, "ftypavif", 8, false},
    {"JPEG XL", 0, "\xFF\x0A", 2, false},
    {"JPEG XL", 0, "\0\0\0\x0CJXL \r\n\x87\n", 12, false},
    {"PSD", 0, "8BPS", 4, false},
    {"QOI", 0, "qoif", 4, false},
};

}  // namespace

Format sniff_format(const uint8_t* p, size_t n) {
  if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '7') return {"PNM", true};  // PBM/PGM/PPM/PAM
  for (const Signature& s : kSignatures) {
    if (n < s.offset + s.len || std::memcmp(p + s.offset, s.magic, s.len) != 0) continue;
    if (s.offset == 8 && std::memcmp(p, "RIFF", 4) != 0) continue;
    return {s.name, s.decodable};
  }
  return {};
}

std::string undecodable_reason(const Format& f) {
  if (f.name.empty()) return "not an image (unrecognised header)";
  return "unsupported format " + f.name + " (neither stb_image nor OpenCV decodes it)";
}

bool stb_header_info(const uint8_t* data, size_t size, int& w, int& h, int& channels) {
  return stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &channels) != 0;
}

std::string size_text(int64_t w, int64_t h) {
  return std::to_string(w) + " x " + std::to_string(h) + " = " + std::to_string(w * h) + " pixels";
}

namespace {

// stb_image, with the decoder's reads watched.
// stb_image reads through these callbacks: a decoder that asks for bytes past the end of the file
// (a refill at end of file, a skip beyond it, or a short bulk read) is decoding a truncated file.
// stb pads such reads with zeros for BMP, GIF, PNM and (stb_image 2.30) JPEG: grey/black rows.
struct WatchedSource {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  const char* refill_buffer = nullptr;  // stb's own 128-byte buffer: the destination of the first read
  bool past_end = false;
};

int watched_read(void* user, char* dst, int len) {
  auto* s = static_cast<WatchedSource*>(user);
  if (len <= 0) return 0;
  if (!s->refill_buffer) s->refill_buffer = dst;
  const size_t n = std::min(static_cast<size_t>(len), s->size - s->pos);
  // A refill may come back short at the end of a complete file; a bulk read (stbi__getn) may not.
  if (n == 0 || (dst != s->refill_buffer && n < static_cast<size_t>(len))) s->past_end = true;
  std::memcpy(dst, s->data + s->pos, n);
  s->pos += n;
  return static_cast<int>(n);
}

void watched_skip(void* user, int n) {
  auto* s = static_cast<WatchedSource*>(user);
  if (n < 0) {
    s->pos -= std::min(s->pos, static_cast<size_t>(-static_cast<long>(n)));
  } else if (static_cast<size_t>(n) > s->size - s->pos) {
    s->past_end = true;
    s->pos = s->size;
  } else {
    s->pos += static_cast<size_t>(n);
  }
}

int watched_eof(void* user) {
  auto* s = static_cast<WatchedSource*>(user);
  return s->pos >= s->size ? 1 : 0;
}

using StbPixels = std::unique_ptr<stbi_uc, void (*)(void*)>;

struct StbResult {
  StbPixels px{nullptr, stbi_image_free};
  int w = 0, h = 0;
  bool past_end = false;  // the decoder wanted bytes beyond the end of the data
  std::string reason;     // stb's failure reason when px is null
};

// Decodes with `req` channels. PNG goes through stb's in-memory reader (its zlib stream reports missing
// data itself); every other format, and a PNG that failed (to tell truncation from an unsupported
// feature), through the watched reader. JPEG must be watched: stb_image 2.30 (Debian 13) decodes a cut
// JPEG with padded rows where the 2022 snapshot (Debian 12) fails.
StbResult stb_decode(const uint8_t* data, size_t size, int req, const std::string& format) {
  StbResult r;
  int got = 0;
  if (format == "PNG") {
    r.px.reset(stbi_load_from_memory(data, static_cast<int>(size), &r.w, &r.h, &got, req));
    if (r.px) return r;
  }
  WatchedSource src{data, size};
  const stbi_io_callbacks io{watched_read, watched_skip, watched_eof};
  r.px.reset(stbi_load_from_callbacks(&io, &src, &r.w, &r.h, &got, req));
  r.past_end = src.past_end;
  if (!r.px) {
    const char* why = stbi_failure_reason();
    r.reason = why ? why : "unknown";
  }
  return r;
}

// ---- OpenCV's imgcodecs (formats and variants stb_image lacks) ----

// Samples of an 8-bit image with `c` channels (1 gray, 2 gray+alpha, 3 BGR, 4 BGRA) in the layout
// stb_image returns for `req` channels (gray; RGB; RGBA; alpha 255 when the file has none).
std::vector<uint8_t> to_stb_layout(const cv::Mat& m, int req) {
  const int c = m.channels();
  std::vector<uint8_t> out(static_cast<size_t>(m.rows) * m.cols * req);
  uint8_t* dst = out.data();
  for (int y = 0; y < m.rows; ++y) {
    const uint8_t* p = m.ptr<uint8_t>(y);
    for (int x = 0; x < m.cols; ++x, p += c, dst += req) {
      const bool colour = c >= 3;
      const uint8_t r = colour ? p[2] : p[0], g = colour ? p[1] : p[0], b = p[0];
      const uint8_t a = c == 2 ? p[1] : c == 4 ? p[3] : 255;
      if (req == 1) {
        dst[0] = p[0];  // only asked for gray files
      } else {
        dst[0] = r, dst[1] = g, dst[2] = b;
        if (req == 4) dst[3] = a;
      }
    }
  }
  return out;
}

// cv::imdecode with the file's own channels (IMREAD_UNCHANGED: no EXIF rotation, as PIL's open),
// reduced to 8 bits (16-bit: high byte, or for one channel with SixteenBit::pillow clipped to 0..255;
// float: 0..1 scaled to 0..255). Empty on failure.
cv::Mat opencv_decode(const uint8_t* data, size_t size, SixteenBit sixteen_bit) {
  cv::Mat m;
#if !TORCHFIT_HAVE_IMGCODECS
  (void)data, (void)size, (void)sixteen_bit;
  return m;  // built without OpenCV's imgcodecs: stb_image's formats only
#else
  try {
    m = cv::imdecode(cv::Mat(1, static_cast<int>(size), CV_8UC1, const_cast<uint8_t*>(data)), cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception&) {
    return {};
  }
  if (m.empty() || m.channels() > 4) return {};
  if (m.depth() == CV_16U && m.channels() == 1 && sixteen_bit == SixteenBit::pillow) {
    m.convertTo(m, CV_8U);  // saturating: Pillow's I;16 → L clip
  } else if (m.depth() == CV_16U) {
    m.convertTo(m, CV_8U, 1.0 / 256, -127.5 / 256);  // round((v - 127.5) / 256) = v >> 8: the high byte, as stb
  } else if (m.depth() == CV_32F || m.depth() == CV_64F) {
    m.convertTo(m, CV_8U, 255.0);
  } else if (m.depth() != CV_8U) {
    m.convertTo(m, CV_8U);
  }
  return m;
#endif
}

// Channels to decode: stb replicates gray and drops alpha exactly like PIL's convert, but its own
// RGB→gray formula differs from PIL's, so colour → grayscale asks for RGB and converts in finish().
int request_channels(ColorMode mode, bool keep_gray, bool colour_file) {
  if (mode == ColorMode::rgba) return 4;
  if (mode == ColorMode::grayscale) return colour_file ? 3 : 1;
  if (keep_gray && !colour_file) return 1;  // L or LA: the alpha is dropped
  return 3;
}

// The Image for `mode` from decoded samples with `req` channels per pixel.
Image finish(const uint8_t* px, int w, int h, int req, ColorMode mode, bool colour_file) {
  Image img;
  img.height = h;
  img.width = w;
  const size_t npx = static_cast<size_t>(w) * static_cast<size_t>(h);
  if (mode == ColorMode::grayscale && colour_file) {
    img.channels = 1;
    img.pixels.resize(npx);
    const uint8_t* p = px;
    for (size_t i = 0; i < npx; ++i, p += 3)
      img.pixels[i] = static_cast<uint8_t>((19595u * p[0] + 38470u * p[1] + 7471u * p[2] + 0x8000u) >> 16);
  } else {
    img.channels = req;
    img.pixels.assign(px, px + npx * static_cast<size_t>(req));
  }
  return img;
}

// The Image for the caller's settings from an 8-bit gray, gray+alpha, BGR or BGRA cv::Mat.
Image from_mat(const cv::Mat& m, const DecodeSettings& s) {
  const bool colour_file = m.channels() >= 3;
  const int req = request_channels(s.mode, s.keep_gray, colour_file);
  const std::vector<uint8_t> px = to_stb_layout(m, req);
  return finish(px.data(), m.cols, m.rows, req, s.mode, colour_file);
}

// Decodes through OpenCV (after stb_image failed or does not know the format). Throws the reason.
// `first_reason`: why the first decoder (stb_image or libjpeg) failed, as "<decoder>: <reason>"; "" when
// none was tried.
Image decode_with_opencv(const uint8_t* data, size_t size, const DecodeSettings& s, const Format& format,
                         const std::string& first_reason) {
  const cv::Mat m = opencv_decode(data, size, s.sixteen_bit);
  if (m.empty()) {
#if !TORCHFIT_HAVE_IMGCODECS
    if (!first_reason.empty()) throw std::runtime_error("corrupt " + format.name + " (" + first_reason + ")");
    if (format.decodable && !format.name.empty()) {
      throw std::runtime_error("unsupported format " + format.name +
                               " (this torchfit was built without OpenCV imgcodecs, which decodes it)");
    }
#endif
    if (!first_reason.empty())
      throw std::runtime_error("corrupt " + format.name + " (" + first_reason + "; OpenCV cannot decode it either)");
    if (!format.decodable || format.name.empty()) throw std::runtime_error(undecodable_reason(format));
    throw std::runtime_error("cannot decode " + format.name + ": OpenCV failed (the file is corrupt, or a " +
                             format.name + " variant OpenCV does not support)");
  }
  // The header is read inside OpenCV (which itself refuses more than 2^30 pixels before decoding).
  const std::string too_big = pixel_limit_reason(m.cols, m.rows, s.max_pixels);
  if (!too_big.empty()) throw std::runtime_error(too_big);
  return from_mat(m, s);
}

// Found by the decoder: it needed bytes the file does not have.
// `why`: the decoder's own words, as "<decoder>: <reason>" ("" when it gave none).
std::string truncated_reason(const Format& format, const std::string& why) {
  return "truncated " + format.name + ": the decoder needs more data than the file holds" +
         (why.empty() ? "" : " (" + why + ")");
}

std::string stb_words(const std::string& reason) { return reason.empty() ? "" : "stb_image: " + reason; }

// JPEG through libjpeg (jpeg_decoder.h), the decoder Pillow uses: its pixels are Pillow's, and a file it
// refuses Pillow refuses too ("broken data stream"), so there is no fallback (OpenCV would decode some
// of them with padding).
Image decode_jpeg(const uint8_t* data, size_t size, const DecodeSettings& s, const Format& format) {
  const jpeg::Decoded d = jpeg::decode(data, size, s.max_pixels > 0 ? 2 * s.max_pixels : 0);
  if (d.truncated) throw std::runtime_error(truncated_reason(format, "libjpeg: Premature end of JPEG file"));
  if (!d.error.empty()) throw std::runtime_error("corrupt JPEG (libjpeg: " + d.error + ")");
  const std::string too_big = pixel_limit_reason(d.width, d.height, s.max_pixels);
  if (!too_big.empty()) throw std::runtime_error(too_big);
  return from_mat(cv::Mat(d.height, d.width, CV_8UC(d.channels), const_cast<uint8_t*>(d.pixels.data())), s);
}

// SixteenBit::pillow for a 16-bit gray PNG: the samples clipped to 0..255, as Pillow's I → L. Nothing
// when the file is not one, or does not decode (the usual path then reports why).
std::optional<Image> decode_png16_gray_clipped(const uint8_t* data, size_t size, const DecodeSettings& s) {
  if (s.sixteen_bit != SixteenBit::pillow || !stbi_is_16_bit_from_memory(data, static_cast<int>(size)))
    return std::nullopt;
  int w = 0, h = 0, c = 0;
  const std::unique_ptr<stbi_us, void (*)(void*)> px(
      stbi_load_16_from_memory(data, static_cast<int>(size), &w, &h, &c, 1), stbi_image_free);
  if (!px || w <= 0 || h <= 0) return std::nullopt;
  cv::Mat clipped;
  cv::Mat(h, w, CV_16UC1, px.get()).convertTo(clipped, CV_8U);  // saturating
  return from_mat(clipped, s);
}

// Formats stb_image decodes (binary PGM/PPM only among the PNM family).
bool read_by_stb(const Format& f, const uint8_t* p, size_t n) {
  if (f.name == "PNM") return n >= 2 && (p[1] == '5' || p[1] == '6');
  return f.name == "PNG" || f.name == "JPEG" || f.name == "GIF" || f.name == "BMP";
}

// An stb format whose header stb cannot read: a cut file (how far the header query reads differs
// between stb_image releases), or a variant stb lacks (RLE BMP) — the decoder tells which.
Image decode_unreadable_header(const uint8_t* data, size_t size, const DecodeSettings& s, const Format& format) {
  const char* why = stbi_failure_reason();
  const std::string info_reason = why ? why : "unknown";
  const StbResult r = stb_decode(data, size, 3, "");
  if (r.past_end) throw std::runtime_error(truncated_reason(format, stb_words(r.reason)));
  return decode_with_opencv(data, size, s, format, stb_words(r.px ? info_reason : r.reason));
}

}  // namespace

Image decode_or_throw(const uint8_t* data, size_t size, const DecodeSettings& s) {
  if (size == 0) throw std::runtime_error("empty file");
  const Format format = sniff_format(data, size);
  if (format.name == "JPEG") return decode_jpeg(data, size, s, format);
  int w = 0, h = 0, file_c = 0;
  if (!stbi_info_from_memory(data, static_cast<int>(size), &w, &h, &file_c)) {
    if (!read_by_stb(format, data, size)) return decode_with_opencv(data, size, s, format, "");
    return decode_unreadable_header(data, size, s, format);
  }
  const std::string too_big = pixel_limit_reason(w, h, s.max_pixels);
  if (!too_big.empty()) throw std::runtime_error(too_big);
  if (file_c == 1 && format.name == "PNG")
    if (std::optional<Image> clipped = decode_png16_gray_clipped(data, size, s)) return std::move(*clipped);
  const bool colour_file = file_c >= 3;
  const int req = request_channels(s.mode, s.keep_gray, colour_file);
  const StbResult r = stb_decode(data, size, req, format.name);
  if (r.past_end) throw std::runtime_error(truncated_reason(format, stb_words(r.reason)));
  if (r.px && r.w > 0 && r.h > 0) return finish(r.px.get(), r.w, r.h, req, s.mode, colour_file);
  // stb refused a variant it lacks (RLE BMP, ...) or corrupt data: OpenCV decides.
  const std::string why = r.px ? "empty image (" + std::to_string(r.w) + "x" + std::to_string(r.h) + ")" : r.reason;
  return decode_with_opencv(data, size, s, format, stb_words(why));
}

}  // namespace detail

namespace {

// Reads a whole regular file. Opened non-blocking and checked with fstat before any read: a FIFO or
// device put where an image was (after the header check) is refused, never waited on.
std::vector<uint8_t> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open image " + path + ": " + std::strerror(errno));
  const std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError("cannot read image " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw IoError("cannot decode image " + path + ": not a regular file");
  if (st.st_size <= 0) throw IoError("cannot decode image " + path + ": empty file");
  std::vector<uint8_t> data(static_cast<size_t>(st.st_size));
  size_t got = 0;
  while (got < data.size()) {
    const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError("cannot read image " + path + ": " + (n < 0 ? std::strerror(errno) : "short read"));
    got += static_cast<size_t>(n);
  }
  return data;
}

}  // namespace

Image decode_image(const uint8_t* data, size_t size, ColorMode mode, const std::string& what, bool keep_gray,
                   int64_t max_image_pixels, SixteenBit sixteen_bit) {
  try {
    return detail::decode_or_throw(data, size, detail::DecodeSettings{mode, keep_gray, max_image_pixels, sixteen_bit});
  } catch (const std::bad_alloc&) {
    throw IoError("cannot decode image " + what + ": out of memory");
  } catch (const std::exception& e) {
    throw IoError("cannot decode image " + what + ": " + e.what());
  }
}

Image load_image(const std::string& path, ColorMode mode, bool keep_gray, int64_t max_image_pixels,
                 SixteenBit sixteen_bit) {
  const std::vector<uint8_t> data = read_file(path);
  return decode_image(data.data(), data.size(), mode, path, keep_gray, max_image_pixels, sixteen_bit);
}

}  // namespace torchfit::data
