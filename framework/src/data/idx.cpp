// IDX reader (MNIST format); .gz files are decompressed through `gzip -dc`.
#include <torchfit/data/idx.h>

#include <torchfit/error.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

namespace torchfit::data {

namespace {
std::vector<uint8_t> slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
}  // namespace

std::vector<uint8_t> read_gzip_file(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw IoError("cannot open " + path + ": " + std::strerror(errno));
    unsigned char magic[2] = {0, 0};
    probe.read(reinterpret_cast<char*>(magic), 2);
    if (magic[0] != 0x1f || magic[1] != 0x8b) throw IoError("not a gzip file (bad magic): " + path);
  }
  gzFile f = ::gzopen(path.c_str(), "rb");
  if (!f) throw IoError("cannot open " + path + ": " + std::strerror(errno));
  std::vector<uint8_t> out;
  std::vector<uint8_t> buf(1 << 20);
  for (;;) {
    const int n = ::gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const std::string why = ::gzerror(f, &code);
      ::gzclose(f);
      throw IoError("corrupt gzip file " + path + ": " + why);
    }
    if (n == 0) break;
    out.insert(out.end(), buf.begin(), buf.begin() + n);
  }
  // A stream cut short reads as a clean end in gzread; gzclose reports it.
  const int rc = ::gzclose(f);
  if (rc != Z_OK) throw IoError("corrupt or truncated gzip file " + path + " (zlib error " + std::to_string(rc) + ")");
  return out;
}

IdxArray read_idx_file(const std::string& path) {
  const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  std::vector<uint8_t> bytes = gz ? read_gzip_file(path) : slurp(path);
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0) throw IoError("not an IDX file (bad magic): " + path);
  if (bytes[2] != 0x08)
    throw IoError("IDX file " + path + " holds type 0x" + std::to_string(bytes[2]) +
                  ", only unsigned bytes (0x08) are supported");
  const int ndim = bytes[3];
  if (bytes.size() < 4 + 4 * static_cast<size_t>(ndim)) throw IoError("truncated IDX header: " + path);
  IdxArray a;
  for (int i = 0; i < ndim; ++i) {
    const uint8_t* p = bytes.data() + 4 + 4 * i;
    a.dims.push_back(int64_t(p[0]) << 24 | int64_t(p[1]) << 16 | int64_t(p[2]) << 8 | int64_t(p[3]));
  }
  const size_t offset = 4 + 4 * static_cast<size_t>(ndim);
  const auto n = static_cast<size_t>(a.numel());
  if (bytes.size() < offset + n)
    throw IoError("truncated IDX file " + path + ": " + std::to_string(bytes.size() - offset) +
                  " data bytes, dims need " + std::to_string(n));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                bytes.begin() + static_cast<std::ptrdiff_t>(offset + n));
  return a;
}

}  // namespace torchfit::data
