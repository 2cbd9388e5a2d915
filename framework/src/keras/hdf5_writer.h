#pragma once
/// @file hdf5_writer.h
/// An HDF5 file written in memory (the HDF5 C API's core driver): groups, string attributes as h5py writes
/// them and numeric datasets, then the file's bytes. Private to the Keras writers (keras/keras_save.cpp);
/// compiled only with TORCHFIT_HAVE_KERAS_IMPORT.
#include <string>
#include <vector>

#include <ATen/Tensor.h>

namespace torchfit::keras::detail {

class Hdf5Writer {
 public:
  /// A new, empty file held in memory; `name` is used in errors (the file it will become).
  explicit Hdf5Writer(std::string name);
  ~Hdf5Writer();
  Hdf5Writer(const Hdf5Writer&) = delete;
  Hdf5Writer& operator=(const Hdf5Writer&) = delete;

  /// Creates the group `path` ("/layers/conv2d/vars"), and the groups on the way that do not exist yet.
  void group(const std::string& path);
  /// A scalar variable-length UTF-8 string attribute: what h5py writes for `attrs[k] = "text"` (Keras 3's
  /// `vars` groups' "name").
  void text_attribute(const std::string& object, const std::string& attr, const std::string& value);
  /// A one-dimensional fixed-length byte-string attribute, h5py's `attrs[k] = [b"a", b"bc"]` (tf.keras's
  /// layer_names, weight_names); an empty list is written as NumPy writes `np.array([])`: an empty float64
  /// array.
  void bytes_list_attribute(const std::string& object, const std::string& attr, const std::vector<std::string>& values);
  /// A contiguous dataset at `path` holding `value` (any shape, a 0-D tensor a scalar), stored with its
  /// element type: float32/64, int32/64, uint8; bool as uint8, float16/bfloat16 as float32 (Keras's
  /// variables are float32 under every dtype policy). Errors: IoError naming the file and path
  /// for another type or a failed write; the parent groups must exist.
  void dataset(const std::string& path, const at::Tensor& value);
  /// The bytes of the file as it stands (flushed).
  std::string bytes() const;

 private:
  std::string where(const std::string& object) const;
  long long file_ = -1;  // hid_t
  std::string name_;
};

}  // namespace torchfit::keras::detail
