#include "keras/hdf5_writer.h"

#if TORCHFIT_HAVE_KERAS_IMPORT
#include <atomic>

#include <ATen/ATen.h>

#include <torchfit/error.h>

#include "keras/hdf5_handle.h"

namespace torchfit::keras::detail {
namespace {

// The file type and the memory type of a tensor's elements.
std::pair<hid_t, hid_t> hdf5_types(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case at::kDouble:
      return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case at::kInt:
      return {H5T_STD_I32LE, H5T_NATIVE_INT32};
    case at::kLong:
      return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case at::kByte:
    case at::kBool:
      return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
    default:
      return {-1, -1};
  }
}

}  // namespace

Hdf5Writer::Hdf5Writer(std::string name) : name_(std::move(name)) {
  silence_hdf5_errors();
  static std::atomic<int> counter{0};  // the core driver keys open files by name
  const std::string image = "torchfit-image-" + std::to_string(counter++) + ".h5";
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.ok() || H5Pset_fapl_core(fapl, 1 << 20, 0) < 0)
    throw IoError(name_ + ": cannot set up an in-memory HDF5 file");
  file_ = H5Fcreate(image.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  if (file_ < 0) throw IoError(name_ + ": cannot create an in-memory HDF5 file");
}

Hdf5Writer::~Hdf5Writer() {
  if (file_ >= 0) H5Fclose(file_);
}

std::string Hdf5Writer::where(const std::string& object) const { return name_ + " (HDF5 object " + object + ")"; }

void Hdf5Writer::group(const std::string& path) {
  if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) > 0) return;
  Hid lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl, 1);
  Hid g(H5Gcreate2(file_, path.c_str(), lcpl, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.ok()) throw IoError(where(path) + ": cannot create the group");
}

namespace {

void write_attribute(hid_t file, const std::string& object, const std::string& attr, hid_t type, hid_t space,
                     const void* data, const std::string& where) {
  Hid a(H5Acreate_by_name(file, object.c_str(), attr.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
  if (!a.ok() || (data != nullptr && H5Awrite(a, type, data) < 0)) {  // an empty array has nothing to write
    throw IoError(where + ": cannot write attribute '" + attr + "'");
  }
}

}  // namespace

void Hdf5Writer::text_attribute(const std::string& object, const std::string& attr, const std::string& value) {
  Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  Hid space(H5Screate(H5S_SCALAR), H5Sclose);
  const char* p = value.c_str();
  write_attribute(file_, object, attr, type, space, &p, where(object));
}

void Hdf5Writer::bytes_list_attribute(const std::string& object, const std::string& attr,
                                      const std::vector<std::string>& values) {
  if (values.empty()) {  // np.array([]) is float64
    const hsize_t zero = 0;
    Hid space(H5Screate_simple(1, &zero, nullptr), H5Sclose);
    write_attribute(file_, object, attr, H5T_IEEE_F64LE, space, nullptr, where(object));
    return;
  }
  size_t width = 1;
  for (const auto& v : values) width = std::max(width, v.size());
  std::string data(width * values.size(), '\0');
  for (size_t i = 0; i < values.size(); ++i) data.replace(i * width, values[i].size(), values[i]);
  Hid type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type, width);
  H5Tset_strpad(type, H5T_STR_NULLPAD);
  const hsize_t n = values.size();
  Hid space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  write_attribute(file_, object, attr, type, space, data.data(), where(object));
}

void Hdf5Writer::dataset(const std::string& path, const at::Tensor& value) {
  at::Tensor v = value.detach().to(at::kCPU).contiguous();
  if (v.scalar_type() == at::kBool) v = v.to(at::kByte);
  if (v.scalar_type() == at::kHalf || v.scalar_type() == at::kBFloat16) v = v.to(at::kFloat);  // HDF5 1.10: no half
  const auto [file_type, mem_type] = hdf5_types(v.scalar_type());
  if (file_type < 0)
    throw IoError(where(path) + ": cannot store a " + std::string(c10::toString(v.scalar_type())) + " weight");
  std::vector<hsize_t> dims(v.sizes().begin(), v.sizes().end());
  Hid space(
      dims.empty() ? H5Screate(H5S_SCALAR) : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
      H5Sclose);
  Hid d(H5Dcreate2(file_, path.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!d.ok() || H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data_ptr()) < 0) {
    throw IoError(where(path) + ": cannot write the dataset");
  }
}

std::string Hdf5Writer::bytes() const {
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) throw IoError(name_ + ": cannot flush the in-memory HDF5 file");
  const ssize_t size = H5Fget_file_image(file_, nullptr, 0);
  if (size < 0) throw IoError(name_ + ": cannot read the in-memory HDF5 file's image");
  std::string out(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file_, out.data(), out.size()) != size) throw IoError(name_ + ": cannot read the HDF5 image");
  return out;
}

}  // namespace torchfit::keras::detail
#endif
