#include "keras/hdf5_file.h"

#if TORCHFIT_HAVE_KERAS_IMPORT
#include "keras/hdf5_handle.h"

#include <filesystem>
#include <limits>

#include <ATen/ATen.h>

#include <torchfit/error.h>

namespace torchfit::keras::detail {
namespace {

std::string strip_nuls(const char* data, size_t size) {
  std::string s(data, size);
  const auto end = s.find('\0');
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace

Hdf5File::Hdf5File(const std::string& path) : name_(path) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw IoError(path + ": no such file");
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file_ < 0) throw IoError(path + ": not an HDF5 file (or unreadable)");
}

Hdf5File::Hdf5File(const std::string& bytes, const std::string& name) : name_(name) {
  silence_hdf5_errors();
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl, 1 << 16, 0) < 0 ||
      H5Pset_file_image(fapl, const_cast<char*>(bytes.data()), bytes.size()) < 0) {
    throw IoError(name + ": cannot set up an in-memory HDF5 file");
  }
  file_ = H5Fopen(name.c_str(), H5F_ACC_RDONLY, fapl);
  if (file_ < 0) throw IoError(name + ": not an HDF5 file");
}

Hdf5File::~Hdf5File() {
  if (file_ >= 0) H5Fclose(file_);
}

std::string Hdf5File::where(const std::string& object) const { return name_ + ": " + object; }

bool Hdf5File::exists(const std::string& path) const {
  // H5Lexists must be asked link by link: an intermediate group that is missing is an error, not "no".
  std::string prefix;
  size_t start = path.front() == '/' ? 1 : 0;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    prefix += "/" + path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (H5Lexists(file_, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return true;
}

bool Hdf5File::has_attribute(const std::string& object, const std::string& attr) const {
  if (object != "/" && !exists(object)) return false;
  return H5Aexists_by_name(file_, object.c_str(), attr.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> Hdf5File::strings(const std::string& object, const std::string& attr) const {
  if (!has_attribute(object, attr)) throw IoError(where(object) + " has no attribute '" + attr + "'");
  Hid a(H5Aopen_by_name(file_, object.c_str(), attr.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  Hid type(H5Aget_type(a), H5Tclose);
  Hid space(H5Aget_space(a), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  const H5T_class_t cls = H5Tget_class(type);
  if (cls != H5T_STRING) {
    if (n == 0) return {};  // Keras: an empty float64 array for "no weights"
    throw IoError(where(object) + ": attribute '" + attr + "' holds no strings");
  }
  std::vector<std::string> out;
  if (H5Tis_variable_str(type) > 0) {
    // Read with the file's own type: HDF5 does not convert between ASCII and UTF-8 strings (h5py writes UTF-8).
    Hid mem(H5Tget_native_type(type, H5T_DIR_ASCEND), H5Tclose);
    std::vector<char*> buf(static_cast<size_t>(n), nullptr);
    if (H5Aread(a, mem, buf.data()) < 0) throw IoError(where(object) + ": cannot read attribute '" + attr + "'");
    for (char* s : buf) {
      out.emplace_back(s ? s : "");
      if (s) H5free_memory(s);
    }
    return out;
  }
  const size_t size = H5Tget_size(type);
  std::vector<char> buf(static_cast<size_t>(n) * size);
  if (H5Aread(a, type, buf.data()) < 0) throw IoError(where(object) + ": cannot read attribute '" + attr + "'");
  for (hssize_t i = 0; i < n; ++i) out.push_back(strip_nuls(buf.data() + static_cast<size_t>(i) * size, size));
  return out;
}

std::string Hdf5File::string(const std::string& object, const std::string& attr) const {
  const auto all = strings(object, attr);
  if (all.size() != 1) {
    throw IoError(where(object) + ": attribute '" + attr + "' should hold one string, holds " +
                  std::to_string(all.size()));
  }
  return all.front();
}

std::vector<std::string> Hdf5File::children(const std::string& group) const {
  if (group != "/" && !exists(group)) throw IoError(where(group) + ": no such group");
  Hid g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.ok()) throw IoError(where(group) + ": not a group");
  H5G_info_t info;
  H5Gget_info(g, &info);
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    const ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(static_cast<size_t>(len) + 1, '\0');
    H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT);
    name.resize(static_cast<size_t>(len));
    names.push_back(name);
  }
  return names;
}

namespace {

std::string type_name(hid_t type) {
  const size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return "float" + std::to_string(bits);
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + std::to_string(bits);
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    default:
      return "non-numeric";
  }
}

}  // namespace

Hdf5File::DatasetInfo Hdf5File::dataset_info(const std::string& path) const {
  if (!exists(path)) throw IoError(where(path) + ": no such dataset");
  Hid d(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) throw IoError(where(path) + ": not a dataset");
  Hid type(H5Dget_type(d), H5Tclose);
  Hid space(H5Dget_space(d), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) throw IoError(where(path) + ": cannot read the dataset's shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  DatasetInfo info{{}, type_name(type)};
  for (const hsize_t n : dims) {
    if (n > static_cast<hsize_t>(std::numeric_limits<int64_t>::max()))
      throw IoError(where(path) + ": declares a dimension of " + std::to_string(n) + " (over 2^63 - 1)");
    info.shape.push_back(static_cast<int64_t>(n));
  }
  return info;
}

at::Tensor Hdf5File::dataset(const std::string& path) const {
  const DatasetInfo info = dataset_info(path);
  const bool integer = info.dtype.find("int") != std::string::npos;
  if (info.dtype.rfind("float", 0) != 0 && !integer)
    throw IoError(where(path) + ": not a numeric dataset (" + info.dtype + ")");  // HDF5 converts integers
  Hid d(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
  at::Tensor out = at::empty(info.shape, at::kDouble);
  if (out.numel() > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data_ptr<double>()) < 0) {
    throw IoError(where(path) + ": cannot read the dataset");
  }
  return out;
}

}  // namespace torchfit::keras::detail
#endif  // TORCHFIT_HAVE_KERAS_IMPORT
