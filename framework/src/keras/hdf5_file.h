#pragma once
/// @file hdf5_file.h
/// A read-only HDF5 file (the HDF5 C API): string attributes (fixed- or variable-length, scalar or
/// array), links and float datasets. Private to the Keras readers (keras/keras_file.cpp); compiled
/// only with TORCHFIT_HAVE_KERAS_IMPORT.
#include <memory>
#include <string>
#include <vector>

#include <ATen/Tensor.h>

namespace torchfit::keras::detail {

class Hdf5File {
 public:
  /// Opens `path` read-only. Errors: IoError naming the file when it is missing or no HDF5 file.
  explicit Hdf5File(const std::string& path);
  /// Opens an HDF5 file held in memory (the weights inside a .keras zip); `name` is used in errors.
  Hdf5File(const std::string& bytes, const std::string& name);
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  const std::string& name() const { return name_; }
  /// Whether `path` ("/a/b") names an object; every link on the way is checked.
  bool exists(const std::string& path) const;
  /// Whether the object at `object` has the attribute `attr`.
  bool has_attribute(const std::string& object, const std::string& attr) const;
  /// The strings of a string attribute (one for a scalar); an attribute holding an empty numeric array
  /// (Keras's `weight_names` of a weightless layer, float64) gives none. Trailing NULs are dropped.
  /// Errors: IoError naming the file, object and attribute when it is absent or holds something else.
  std::vector<std::string> strings(const std::string& object, const std::string& attr) const;
  /// A single string attribute (scalar or one-element array).
  std::string string(const std::string& object, const std::string& attr) const;
  /// The names of the links in group `group`, in HDF5's (alphabetical) order.
  std::vector<std::string> children(const std::string& group) const;
  /// What a dataset declares in its header: its shape and element type. Nothing of its data is read.
  struct DatasetInfo {
    std::vector<int64_t> shape;  ///< the dataspace's dimensions ({} for a scalar)
    std::string dtype;  ///< "float16", "float32", "float64" (float<bits> for others), "int32", "uint8", "string", …
  };
  /// The declared shape and type of the dataset at `path`. Errors: IoError naming the file and dataset
  /// when it is absent, no dataset, or declares a dimension over 2^63 - 1.
  DatasetInfo dataset_info(const std::string& path) const;
  /// A floating-point or integer dataset as a float64 tensor of its shape (a scalar: 0-D; HDF5 converts). Allocates
  /// what the shape declares: check dataset_info() against what is expected first. Errors: IoError naming the file and
  /// dataset when it is absent, not numeric or cannot be read (e.g. data missing from the file).
  at::Tensor dataset(const std::string& path) const;

 private:
  std::string where(const std::string& object) const;
  long long file_ = -1;  // hid_t
  std::string name_;
};

}  // namespace torchfit::keras::detail
