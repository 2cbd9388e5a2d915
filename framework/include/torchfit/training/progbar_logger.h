#pragma once
/// @file progbar_logger.h
/// ProgbarLogger — prints the Keras progress line during fit() (keras.callbacks.ProgbarLogger).
#include <iosfwd>
#include <memory>
#include <optional>

#include <torch/arg.h>

#include <torchfit/training/callback.h>
#include <torchfit/training/progbar.h>

namespace torchfit {

/// Options of ProgbarLogger.
struct ProgbarLoggerOptions {
  using StreamPtr = std::ostream*;
  /// Where the line goes; nullptr ⇒ std::cout.
  TORCH_ARG(StreamPtr, out) = nullptr;
  /// true: rewrite the line in place with '\r'; false: print only epoch-end lines; unset ⇒ true when
  /// `out` is std::cout on a terminal.
  TORCH_ARG(std::optional<bool>, dynamic) = std::nullopt;
  /// Clock in seconds for the line's times; default steady_clock (tests inject one).
  TORCH_ARG(Progbar::Clock, clock) = {};
};

/// Prints `Epoch e/E` before each epoch (when E > 1), the running means after each step and the epoch's
/// final line with validation values, at params().verbose (1: progress bar, 2: one line per epoch,
/// 0: nothing). Values shown: loss, the compiled metrics in order, then val_loss and val_ metrics.
/// A run that stops mid-epoch (Ctrl-C) ends the open line with a newline. fit() adds one first in its
/// callback list when verbose > 0.
class ProgbarLogger : public Callback {
 public:
  explicit ProgbarLogger(ProgbarLoggerOptions options = {});
  void on_epoch_begin(int epoch, const Logs& logs) override;
  bool chief_only() const override { return true; }  ///< rank 0 only in data-parallel runs
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  Progbar::Values values(const Logs& logs, bool with_validation) const;
  ProgbarLoggerOptions options_;
  std::unique_ptr<Progbar> bar_;
};

}  // namespace torchfit
