#pragma once
/// @file npy.h
/// NumPy's array files: .npy (numpy.save) and .npz (numpy.savez / savez_compressed), read into tensors.
///
/// Format: NumPy's "format" module (numpy/lib/format.py, NEP 1): the magic "\x93NUMPY", a version byte
/// pair (1.0: 2-byte header length; 2.0 and 3.0: 4-byte; 3.0's header is UTF-8), then a Python dict
/// literal {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } and the raw data.
/// Debian has no kept library for the format that reads an array of a type known only from the file
/// (xtensor's xnpy.hpp loads a compile-time element type, no .npz), so this is a small reader.
#include <map>
#include <string>

#include <ATen/core/Tensor.h>

namespace torchfit::io {

/// The array of a .npy file's bytes, as a contiguous CPU tensor of the file's shape (a 0-d tensor for
/// shape ()). Element types (descr, little-endian '<' or byte-order-free '|'): f2 → Half, f4 → Float,
/// f8 → Double, i1/i2/i4/i8 → Char/Short/Int/Long, u1 → Byte, u2 → Int (widened: LibTorch 1.13 has no
/// uint16), u4 → Long, u8 → Long (values ≥ 2^63 refused), b1 → Bool. Fortran-ordered arrays are
/// returned in C order (the same elements at the same indices). `source` names the bytes in errors.
/// Errors: IoError "<source>: …" for a missing magic string, an unknown version, a header that is not
/// the dict NumPy writes (or lacks descr, fortran_order or shape), a big-endian descr ('>f4': "convert
/// with a.astype('<f4')"), an object array ('|O': pickled, never read), a structured or other
/// unsupported dtype, or data shorter than the header's shape needs (a truncated file, with both sizes).
at::Tensor parse_npy(const std::string& bytes, const std::string& source);

/// parse_npy of the file `path`. Errors: IoError naming the file (and the OS reason) when it cannot be
/// read; parse_npy's.
at::Tensor read_npy(const std::string& path);

/// The arrays of a .npz file (a zip of NAME.npy members, stored or deflated), keyed by NAME (the member
/// name without ".npy", as numpy.load(...).files lists them). Errors: IoError naming the file when it is
/// not a zip or a member cannot be read, naming "<file>:<member>" for a bad member (parse_npy's errors),
/// or saying that this build has no libzip (npz_available()).
std::map<std::string, at::Tensor> read_npz(const std::string& path);

/// Whether read_npz works in this build (libzip: TORCHFIT_WITH_KERAS_IMPORT).
bool npz_available();

}  // namespace torchfit::io
