#pragma once
// Reader for the NumPy .npy files under tests/data/golden/ (written by scripts/keras_oracle.py).
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace torchfit::testing {

/// One array from a .npy file: dtype `descr` as NumPy writes it ("<f4" float32, "|u1" uint8), C-order
/// `shape`, and the raw little-endian element bytes.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  /// Number of elements (product of `shape`; 1 for a 0-d array).
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
  /// The elements as T (T must match `descr`: float for "<f4", uint8_t for "|u1").
  template <class T>
  std::vector<T> values() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
    return v;
  }
};

/// Reads a .npy file (format 1.x/2.x/3.x, C order, dtypes "<f4" and "|u1"; the host is assumed
/// little-endian). Throws std::runtime_error naming `path` when the file is missing, truncated,
/// Fortran-ordered, of another dtype, or its size does not match the shape.
inline NpyArray read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot open golden file " + path +
                             " (regenerate: /usr/bin/python3 scripts/keras_oracle.py)");
  const std::vector<char> all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto bad = [&](const std::string& why) { return std::runtime_error("malformed .npy file " + path + ": " + why); };
  if (all.size() < 10 || std::memcmp(all.data(), "\x93NUMPY", 6) != 0) throw bad("no NUMPY magic");
  const auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(all[i])); };
  const bool v1 = all[6] == 1;
  const size_t header_len = v1 ? byte(8) | byte(9) << 8 : byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
  const size_t data_at = (v1 ? 10 : 12) + header_len;
  if (all.size() < data_at) throw bad("truncated header");
  const std::string header(all.begin() + (v1 ? 10 : 12), all.begin() + static_cast<std::ptrdiff_t>(data_at));

  auto value_of = [&](const std::string& key) {
    const size_t k = header.find("'" + key + "':");
    if (k == std::string::npos) throw bad("no '" + key + "' in the header");
    size_t v = k + key.size() + 3;
    while (v < header.size() && header[v] == ' ') ++v;
    return v;
  };
  NpyArray a;
  const size_t d = value_of("descr");
  const size_t d_end = header.find('\'', d + 1);
  if (header[d] != '\'' || d_end == std::string::npos) throw bad("descr is not a string");
  a.descr = header.substr(d + 1, d_end - d - 1);
  if (header.compare(value_of("fortran_order"), 5, "False") != 0) throw bad("Fortran order is not supported");
  const size_t s = value_of("shape");
  const size_t s_end = header.find(')', s);
  if (header[s] != '(' || s_end == std::string::npos) throw bad("shape is not a tuple");
  for (size_t i = s + 1; i < s_end;) {
    if (header[i] == ',' || header[i] == ' ') {
      ++i;
      continue;
    }
    size_t used = 0;
    a.shape.push_back(std::stoll(header.substr(i, s_end - i), &used));
    i += used;
  }

  size_t item = 0;
  if (a.descr == "<f4")
    item = 4;
  else if (a.descr == "|u1")
    item = 1;
  else
    throw bad("dtype " + a.descr + " is not supported (only <f4 and |u1)");
  const size_t expected = static_cast<size_t>(a.numel()) * item;
  if (all.size() - data_at != expected)
    throw bad(std::to_string(all.size() - data_at) + " data bytes, the shape needs " + std::to_string(expected));
  a.bytes.assign(all.begin() + static_cast<std::ptrdiff_t>(data_at), all.end());
  return a;
}

}  // namespace torchfit::testing
