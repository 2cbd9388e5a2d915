#include <torchfit/io/npy.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include <ATen/ATen.h>

#include <torchfit/error.h>

#if TORCHFIT_HAVE_KERAS_IMPORT
#include <zip.h>
#endif

namespace torchfit::io {
namespace {

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

[[noreturn]] void fail(const std::string& source, const std::string& what) { throw IoError(source + ": " + what); }

// A reader of the Python dict literal NumPy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class DictReader {
 public:
  DictReader(const std::string& text, const std::string& source) : s_(text), source_(source) {}

  Header read() {
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_value();
      expect(':');
      if (key == "descr") {
        if (peek('[')) bad("a structured dtype (descr is a list of fields) is not supported");
        h.descr = string_value();
        has_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = bool_value();
        has_order = true;
      } else if (key == "shape") {
        h.shape = tuple_value();
        has_shape = true;
      } else {
        bad("unexpected key '" + key + "' in the header");
      }
      if (!peek(',')) break;
      expect(',');
    }
    expect('}');
    if (!has_descr || !has_order || !has_shape) bad("the header lacks 'descr', 'fortran_order' or 'shape'");
    return h;
  }

 private:
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool peek(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(std::string("expected '") + c + "' at header position " + std::to_string(i_));
    ++i_;
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(source_, "not a valid .npy header (" + what + "): " + s_);
  }
  std::string string_value() {
    skip_space();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) bad("expected a quoted string");
    const char quote = s_[i_++];
    const size_t end = s_.find(quote, i_);
    if (end == std::string::npos) bad("unterminated string");
    std::string v = s_.substr(i_, end - i_);
    i_ = end + 1;
    return v;
  }
  bool bool_value() {
    skip_space();
    for (const char* word : {"True", "False"}) {
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    bad("fortran_order must be True or False");
  }
  std::vector<int64_t> tuple_value() {
    std::vector<int64_t> dims;
    expect('(');
    while (!peek(')')) {
      skip_space();
      const size_t start = i_;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      if (i_ == start || i_ - start > 18) bad("a shape entry is not a non-negative integer");
      dims.push_back(std::stoll(s_.substr(start, i_ - start)));
      if (!peek(',')) break;
      expect(',');
    }
    expect(')');
    return dims;
  }

  const std::string& s_;
  const std::string& source_;
  size_t i_ = 0;
};

struct DType {
  at::ScalarType file;    // the element type in the file
  at::ScalarType result;  // the tensor's (widened for unsigned types LibTorch 1.13 lacks)
  int64_t size;
  bool unsigned64 = false;
};

DType dtype_of(const std::string& descr, const std::string& source) {
  if (descr.size() < 2) fail(source, "unsupported dtype '" + descr + "'");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  if (order == '>') {
    fail(source, "big-endian data (dtype '" + descr + "') is not supported; convert it with a.astype('<" + code +
                     "') before numpy.save");
  }
  if (code == "O") fail(source, "an object array (dtype '" + descr + "', pickled Python objects) is not read");
  if (order != '<' && order != '|') fail(source, "unsupported byte order in dtype '" + descr + "'");
  static const std::map<std::string, DType> types = {
      {"f2", {at::kHalf, at::kHalf, 2}}, {"f4", {at::kFloat, at::kFloat, 4}},     {"f8", {at::kDouble, at::kDouble, 8}},
      {"i1", {at::kChar, at::kChar, 1}}, {"i2", {at::kShort, at::kShort, 2}},     {"i4", {at::kInt, at::kInt, 4}},
      {"i8", {at::kLong, at::kLong, 8}}, {"u1", {at::kByte, at::kByte, 1}},       {"u2", {at::kShort, at::kInt, 2}},
      {"u4", {at::kInt, at::kLong, 4}},  {"u8", {at::kLong, at::kLong, 8, true}}, {"b1", {at::kByte, at::kBool, 1}},
  };
  const auto it = types.find(code);
  if (it == types.end()) {
    fail(source, "unsupported dtype '" + descr +
                     "' (read: f2 f4 f8 i1 i2 i4 i8 u1 u2 u4 u8 b1, little-endian; convert with a.astype)");
  }
  return it->second;
}

// The header's dict text and the offset of the data.
std::pair<std::string, size_t> header_text(const std::string& bytes, const std::string& source) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0) {
    fail(source, "not a .npy file (no \\x93NUMPY magic string at its start)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t len = 0, start = 0;
  if (major == 1) {
    len = static_cast<unsigned char>(bytes[8]) | (static_cast<size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(source, "truncated .npy header");
    for (int i = 3; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    start = 12;
  } else {
    fail(source, "unsupported .npy format version " + std::to_string(major) + "." +
                     std::to_string(static_cast<unsigned char>(bytes[7])) + " (read: 1.0, 2.0, 3.0)");
  }
  if (len > bytes.size() - start) {
    fail(source, "truncated .npy header (" + std::to_string(len) + " bytes announced, " +
                     std::to_string(bytes.size() - start) + " in the file)");
  }
  return {bytes.substr(start, len), start + len};
}

at::Tensor unsigned64_checked(at::Tensor t, const std::string& source) {
  if (t.numel() > 0 && t.min().item<int64_t>() < 0) {
    fail(source, "a uint64 value is 2^63 or more and does not fit int64 (LibTorch has no uint64)");
  }
  return t;
}

}  // namespace

at::Tensor parse_npy(const std::string& bytes, const std::string& source) {
  const auto [text, offset] = header_text(bytes, source);
  const Header h = DictReader(text, source).read();
  const DType type = dtype_of(h.descr, source);
  int64_t count = 1;
  for (int64_t d : h.shape) {
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / type.size / d) fail(source, "the shape is too large");
    count *= d;
  }
  const int64_t have = static_cast<int64_t>(bytes.size() - offset);
  if (count * type.size > have) {
    std::ostringstream shape;
    for (size_t i = 0; i < h.shape.size(); ++i) shape << (i ? ", " : "") << h.shape[i];
    fail(source, "truncated file: the header's shape (" + shape.str() + ") of '" + h.descr + "' needs " +
                     std::to_string(count * type.size) + " bytes of data, the file holds " + std::to_string(have));
  }
  // Fortran order: the data is the C-order array of the reversed shape, transposed.
  std::vector<int64_t> stored(h.shape);
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  at::Tensor t = at::empty(stored, at::TensorOptions().dtype(type.file));
  if (count > 0) std::memcpy(t.data_ptr(), bytes.data() + offset, static_cast<size_t>(count * type.size));
  if (type.result == at::kBool) {
    t = t.ne(0);  // any non-zero byte is True, as NumPy reads it
  } else if (type.file != type.result) {
    // Unsigned types read as the signed type of their size, then mapped back: u2 → + 65536 where negative.
    const int64_t wrap = type.size == 2 ? 65536 : int64_t(1) << 32;
    at::Tensor wide = t.to(type.result);
    t = at::where(wide < 0, wide + wrap, wide);
  }
  if (type.unsigned64) t = unsigned64_checked(t, source);
  if (h.fortran_order && t.dim() > 1) {
    std::vector<int64_t> perm(t.dim());
    for (int64_t i = 0; i < t.dim(); ++i) perm[i] = t.dim() - 1 - i;
    t = t.permute(perm).contiguous();
  }
  return t;
}

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw IoError("cannot read '" + path + "': " + std::strerror(errno));
  return s.str();
}

}  // namespace

at::Tensor read_npy(const std::string& path) { return parse_npy(file_bytes(path), "'" + path + "'"); }

bool npz_available() { return TORCHFIT_HAVE_KERAS_IMPORT != 0; }

#if TORCHFIT_HAVE_KERAS_IMPORT
namespace {

std::string member_bytes(zip_t* z, zip_uint64_t index, const std::string& source) {
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(z, index, 0, &st) != 0) fail(source, "cannot read the zip entry");
  zip_file_t* f = zip_fopen_index(z, index, 0);
  if (!f) fail(source, std::string("cannot open the zip entry: ") + zip_strerror(z));
  std::string out(static_cast<size_t>(st.size), '\0');
  const zip_int64_t n = out.empty() ? 0 : zip_fread(f, out.data(), st.size);
  zip_fclose(f);
  if (n < 0 || static_cast<zip_uint64_t>(n) != st.size) fail(source, "truncated or corrupt zip entry");
  return out;
}

}  // namespace

std::map<std::string, at::Tensor> read_npz(const std::string& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t e;
    zip_error_init_with_code(&e, err);
    const std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    throw IoError("cannot read '" + path + "' as a .npz file (a zip archive): " + why);
  }
  std::map<std::string, at::Tensor> arrays;
  try {
    const zip_int64_t n = zip_get_num_entries(z, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      std::string name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
      const std::string source = "'" + path + ":" + name + "'";
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
      arrays[name] = parse_npy(member_bytes(z, static_cast<zip_uint64_t>(i), source), source);
    }
  } catch (...) {
    zip_close(z);
    throw;
  }
  zip_close(z);
  return arrays;
}
#else
std::map<std::string, at::Tensor> read_npz(const std::string& path) {
  throw IoError("cannot read '" + path +
                "': this torchfit was built without libzip (.npz files are zip archives); apt-get install "
                "libzip-dev libhdf5-dev and reconfigure with TORCHFIT_WITH_KERAS_IMPORT=ON, or save the arrays "
                "with numpy.save as .npy files");
}
#endif

}  // namespace torchfit::io
