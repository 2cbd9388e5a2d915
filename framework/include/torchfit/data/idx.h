#pragma once
/// @file idx.h
/// Reading IDX files (the MNIST / Fashion-MNIST container), plain or gzip-compressed.
#include <cstdint>
#include <string>
#include <vector>

namespace torchfit::data {

/// An unsigned-byte IDX array: `dims` (e.g. {60000, 28, 28} for images, {60000} for labels) and the
/// values in row-major order.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
  /// Product of dims (number of values).
  int64_t numel() const {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
  }
};

/// Decompresses a gzip file into memory (zlib). Errors: IoError naming the file when it is missing,
/// not gzip, corrupt or truncated.
std::vector<uint8_t> read_gzip_file(const std::string& path);

/// Reads an IDX file of unsigned bytes (type code 0x08); a name ending in ".gz" is decompressed
/// first. Errors: IoError naming the file when it is missing, not IDX, not uint8, or shorter than
/// its dimensions say.
IdxArray read_idx_file(const std::string& path);

}  // namespace torchfit::data
