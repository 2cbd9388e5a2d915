#pragma once
// An HDF5 handle closed on scope exit, and HDF5's error printout turned off: shared by the HDF5 reader
// (hdf5_file.cpp) and writer (hdf5_writer.cpp). Private to keras/; compiled only with
// TORCHFIT_HAVE_KERAS_IMPORT.
#include <hdf5.h>

namespace torchfit::keras::detail {

/// Closes an HDF5 handle on scope exit (H5Aclose, H5Tclose, ...).
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  operator hid_t() const { return id_; }  // NOLINT: used as the handle it wraps
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

/// Errors become exceptions with the file's name; HDF5's own stack printout would only be noise.
inline void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

}  // namespace torchfit::keras::detail
