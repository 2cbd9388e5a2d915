// The header check of an image file (check_image_file): file type, signature, size and pixel limit, read
// from the header without decoding where the header tells (as Pillow's Image.open).
#include "data/image_codec.h"

#include <torchfit/error.h>
#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

namespace torchfit::data {

std::string pixel_limit_reason(int64_t width, int64_t height, int64_t max_image_pixels) {
  if (max_image_pixels <= 0 || width * height <= 2 * max_image_pixels) return "";
  return "image too large: " + detail::size_text(width, height) + ", limit " + std::to_string(2 * max_image_pixels) +
         " (twice max_image_pixels " + std::to_string(max_image_pixels) + ", as Pillow's DecompressionBombError)";
}

namespace {

struct File {
  std::FILE* f = nullptr;
  explicit File(const std::string& path) : f(std::fopen(path.c_str(), "rb")) {}
  ~File() {
    if (f) std::fclose(f);
  }
};

// Reads `len` bytes at `offset` from the start. Returns what could be read.
std::vector<uint8_t> read_at(std::FILE* f, long offset, size_t len) {
  std::vector<uint8_t> buf(len);
  if (std::fseek(f, offset, SEEK_SET) != 0) return {};
  buf.resize(std::fread(buf.data(), 1, len, f));
  return buf;
}

// The header part of check_image_file: "" or the reason, with the size when the header gives one.
std::string check_header(std::FILE* f, long size, int64_t max_pixels, int& w, int& h) {
  // 64 KiB covers the headers of nearly every image, including JPEGs with EXIF blocks before SOF.
  const size_t head_len = static_cast<size_t>(std::min<long>(size, 64 * 1024));
  const std::vector<uint8_t> head = read_at(f, 0, head_len);
  if (head.size() != head_len) return "cannot read header";
  const detail::Format format = detail::sniff_format(head.data(), head.size());
  // No known signature, or a format no decoder here reads: said without reading the rest (a renamed
  // video can be gigabytes).
  if (format.name.empty() || !format.decodable) return detail::undecodable_reason(format);
  // PNG's IHDR gives the size at fixed offsets: the limit holds even where stb_image's own cap
  // (2^30 decoded bytes) would send the file to a full OpenCV decode.
  if (format.name == "PNG" && head.size() >= 24 && std::memcmp(head.data() + 12, "IHDR", 4) == 0) {
    const auto be32 = [&](size_t at) {
      return (int64_t{head[at]} << 24) | (int64_t{head[at + 1]} << 16) | (int64_t{head[at + 2]} << 8) | head[at + 3];
    };
    const std::string too_big = pixel_limit_reason(be32(16), be32(20), max_pixels);
    if (!too_big.empty()) return too_big;
  }
  int c = 0;
  bool ok = detail::stb_header_info(head.data(), head.size(), w, h, c);
  std::vector<uint8_t> all;                              // the whole file, read at most once
  if (!ok && head.size() < static_cast<size_t>(size)) {  // header beyond 64 KiB: read it all
    all = read_at(f, 0, static_cast<size_t>(size));
    ok = detail::stb_header_info(all.data(), all.size(), w, h, c);
  }
  if (ok && (w <= 0 || h <= 0))
    return "corrupt " + format.name + " header (size " + std::to_string(w) + "x" + std::to_string(h) + ")";
  if (ok) return pixel_limit_reason(w, h, max_pixels);
  // Not a header stb_image reads (WebP, TIFF, an RLE BMP): the decoders decide, by decoding (OpenCV's
  // imgcodecs has no public header-only call).
  w = h = 0;
  if (all.empty()) all = head;  // head is the whole file here
  try {
    const Image img =
        detail::decode_or_throw(all.data(), all.size(), detail::DecodeSettings{ColorMode::rgb, true, max_pixels});
    w = img.width, h = img.height;
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// "" for a regular file (or a link to one), otherwise why it is not an image file here — without
// opening it (opening a FIFO would block).
std::string file_type_reason(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_regular_file(st)) return "";
  if (ec == std::errc::too_many_symbolic_link_levels) return "symbolic link loop (" + ec.message() + ")";
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)) && !std::filesystem::exists(st)) {
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    return "dangling symbolic link (its target " + target.string() + " does not exist)";
  }
  if (std::filesystem::is_directory(st)) return "a folder, not a file";
  if (std::filesystem::exists(st)) return "not a regular file (a FIFO, socket or device)";
  return std::string("cannot open: ") + (ec ? ec.message() : std::strerror(ENOENT));
}

}  // namespace

std::string check_image_file(const std::string& path, int64_t max_image_pixels) {
  const std::string not_a_file = file_type_reason(path);
  if (!not_a_file.empty()) return not_a_file;
  File file(path);
  if (!file.f) return std::string("cannot open: ") + std::strerror(errno);
  if (std::fseek(file.f, 0, SEEK_END) != 0) return "cannot seek";
  const long size = std::ftell(file.f);
  if (size <= 0) return "empty file";
  int w = 0, h = 0;
  const std::string reason = check_header(file.f, size, max_image_pixels, w, h);
  if (reason.empty() && max_image_pixels > 0 && int64_t{w} * h > max_image_pixels)
    torchfit::logger().warn(
        "image {} is large: {}, above max_image_pixels {} (as Pillow's DecompressionBombWarning); it is "
        "decoded, images above {} pixels are skipped",
        path, detail::size_text(w, h), max_image_pixels, 2 * max_image_pixels);
  return reason;
}

}  // namespace torchfit::data
