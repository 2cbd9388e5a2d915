#pragma once
/// @file progbar.h
/// The Keras 2.x progress line (keras.utils.Progbar), with an injectable clock for golden tests.
#include <functional>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace torchfit {

/// Keras Progbar for one epoch.
///
/// verbose 1 on a terminal (`dynamic` true): the line is rewritten in place with '\r':
///   ` 12/100 [==>...........................] - ETA: 9s - loss: 1.0006 - categorical_accuracy: 0.6425`
/// verbose 1 when not a terminal: only the final line of the epoch (no '\r' in log files).
/// Final line: `100/100 [==============================] - 38s 35ms/step - loss: … - val_loss: …`
/// (seconds since start, validation included; per step s/ms/us, the first step's time left out as Keras
/// ≥ 2.5 does; values `%.4f`, or `%.4e` when |v| ≤ 1e-3).
/// verbose 2: one line per epoch `100/100 - 38s - 35ms/step - loss: …`; verbose 0: silent.
class Progbar {
 public:
  using Clock = std::function<double()>;  ///< seconds, monotonic
  using Values = std::vector<std::pair<std::string, double>>;

  /// `target` steps in the epoch; `clock` defaults to std::chrono::steady_clock.
  Progbar(int64_t target, int verbose, bool dynamic, std::ostream& out, Clock clock = {});

  /// After step `current` (1-based) with the running means `values` (printed in order).
  void update(int64_t current, const Values& values);
  /// Ends the epoch: prints the final line with `values` (training means, then val_ metrics).
  void finalize(const Values& values);

  /// Keras bar text for `current` of `target` with width 30, e.g. "[====>.........]".
  static std::string bar(int64_t current, int64_t target, int width = 30);
  /// Keras number formatting: %.4f, or %.4e when |v| ≤ 1e-3.
  static std::string format_value(double v);

 private:
  std::string values_text(const Values& values) const;
  std::string per_step_text(double seconds_per_step) const;
  double seconds_per_step(double now) const;
  int64_t target_;
  int verbose_;
  bool dynamic_;
  std::ostream& out_;
  Clock clock_;
  double start_;
  int64_t current_ = 0;
  size_t prev_width_ = 0;
  double last_print_ = -1.0;
  double first_step_end_ = -1.0;
};

/// True when `out` is std::cout and stdout is a terminal.
bool is_terminal(std::ostream& out);

}  // namespace torchfit
