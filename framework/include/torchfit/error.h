#pragma once
/// @file error.h
/// torchfit's exception types. Every message names the layer, file, flag or value at fault.
#include <stdexcept>
#include <string>

namespace torchfit {

/// Base of all torchfit errors (a std::runtime_error).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A layer or model cannot be built or configured (bad argument, incompatible shapes).
class ConfigError : public Error {
 public:
  using Error::Error;
};

/// A file is missing, unreadable, corrupt or cannot be written.
class IoError : public Error {
 public:
  using Error::Error;
};

/// An index out of its range, e.g. a batch index beyond a pass (Keras raises ValueError there).
class IndexError : public Error {
 public:
  using Error::Error;
};

/// A computation gave values that are not finite (NaN or ±inf), e.g. the outputs of a model whose
/// weights hold NaN after diverged training.
class NumericError : public Error {
 public:
  using Error::Error;
};

}  // namespace torchfit
