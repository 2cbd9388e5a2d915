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

/// A value given for one option does not fit (e.g. what a resumed run changes of its saved settings):
/// option() is the option's library name (a Keras argument: "learning_rate", …), what() the reason without
/// it, so a caller can name the option its own way (an app: its flag).
class OptionError : public ConfigError {
 public:
  OptionError(std::string option, const std::string& reason) : ConfigError(reason), option_(std::move(option)) {}
  const std::string& option() const { return option_; }

 private:
  std::string option_;
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
