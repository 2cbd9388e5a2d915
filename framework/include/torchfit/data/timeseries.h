#pragma once
/// @file timeseries.h
/// Sliding windows over a time series, as Keras 3's keras.utils.timeseries_dataset_from_array
/// (keras/src/utils/timeseries_dataset_utils.py, the same in 3.15.1 and the 3.16 dev tree), and the
/// next-step forecasting arrangement of its docstring's "Example 2" with a naive last-value baseline.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/arg.h>

#include <torchfit/data/arrays.h>

namespace torchfit::data {

/// The arguments of timeseries_dataset_from_array after `data` and `targets`, with Keras 3's defaults.
struct TimeseriesOptions {
  explicit TimeseriesOptions(int64_t sequence_length_) : sequence_length_(sequence_length_) {}
  /// Time steps per window (required; > 0).
  TORCH_ARG(int64_t, sequence_length);
  /// Steps between the starts of successive windows (default 1; in [1, len(data))).
  TORCH_ARG(int64_t, sequence_stride) = 1;
  /// Steps between successive time steps inside a window (default 1; in [1, len(data))).
  TORCH_ARG(int64_t, sampling_rate) = 1;
  /// Windows per batch (default 128); std::nullopt: unbatched (Keras batch_size=None).
  TORCH_ARG(std::optional<int64_t>, batch_size) = 128;
  /// Windows in a random order of their start positions (default false: chronological).
  TORCH_ARG(bool, shuffle) = false;
  /// Seed of that order (NumPy RandomState(seed)); std::nullopt: a random seed in [0, 10^6), as Keras.
  TORCH_ARG(std::optional<int64_t>, seed) = std::nullopt;
  /// First data index windows may use (default none = 0).
  TORCH_ARG(std::optional<int64_t>, start_index) = std::nullopt;
  /// Data index (exclusive) windows may not reach (default none = len(data)).
  TORCH_ARG(std::optional<int64_t>, end_index) = std::nullopt;
};

/// The windows of timeseries_dataset_from_array, materialised: `arrays.x` the windows (N, sequence_length,
/// ...) in the order Keras yields them, `arrays.y` their targets (N, ...) (undefined without targets),
/// `start_positions` each window's first data index (start_index included), `batch_size` the option's.
/// Materialised rather than a lazy source because Trainer::fit/evaluate/predict(Arrays) take arrays: the
/// windows cost sequence_length / sequence_stride times the data's memory (a 10^6-step float series in
/// windows of 100 is 400 MB), so for long series use a sequence_stride or window slices of the data.
struct TimeseriesDataset {
  Arrays arrays;
  std::vector<int64_t> start_positions;
  std::optional<int64_t> batch_size;
  /// Windows (and targets).
  int64_t size() const { return arrays.samples(); }
  /// The dataset as Keras iterates it: batches of batch_size windows (the last one partial), or, unbatched,
  /// one element per window without the batch axis. Views of `arrays`.
  std::vector<Arrays> batches() const;
};

/// keras.utils.timeseries_dataset_from_array(data, targets, sequence_length, …) as Keras 3 computes it.
/// `data` (T, ...) consecutive time steps along axis 0; `targets` (T', ...) or undefined (no targets),
/// targets[i] being the target of the window that starts at data index i. With s = start_index (0), e =
/// end_index (T), L = sequence_length, r = sampling_rate: there are n = e − s − (L − 1)·r candidate starts
/// (n = min(n, T') with targets), the windows start at p = 0, stride, 2·stride, … < n (relative to s),
/// window p holds data[s + p + k·r] for k = 0 … L−1 and its target is targets[s + p]. shuffle permutes the
/// start positions with NumPy's RandomState(seed).shuffle, exactly as Keras does; Keras's tf.data then adds
/// a local shuffle buffer (8·batch_size windows, or 1024 unbatched) drawn by TensorFlow's own generator
/// each iteration, which is not reproduced: Trainer::fit(shuffle=true) reshuffles all windows per epoch.
/// Windows keep the dtype of data and targets. No window fits (n ≤ 0): an empty dataset, as Keras.
/// Example (Keras's): indices 0 … 98, L = 10, r = 2, stride 3 → [0 2 … 18], [3 5 … 21], …, [78 80 … 96].
/// Errors: ConfigError with Keras's messages naming the argument, checked in Keras's order: start_index
/// < 0 or ≥ T, end_index ≤ start_index, ≥ T or ≤ 0, sampling_rate or sequence_stride ≤ 0 or ≥ T; and,
/// where Keras does not check, sequence_length ≤ 0, end_index = 0 (Keras skips its check for 0 and
/// yields nothing), batch_size ≤ 0, a seed outside [0, 2^32 − 1], a 0-d data or targets, or targets too
/// short for a window's index (Keras fails later in tf.gather).
TimeseriesDataset timeseries_dataset_from_array(const at::Tensor& data, const at::Tensor& targets,
                                                const TimeseriesOptions& options);

/// timeseries_dataset_from_array over arrays in files (load_array: .npy, .npz:NAME, CSV with `separator`);
/// an empty `targets_spec`: no targets. Errors: load_array's IoError naming the file; the above.
TimeseriesDataset timeseries_dataset_from_files(const std::string& data_spec, const std::string& targets_spec,
                                                const TimeseriesOptions& options, char separator = ',');

/// How next_step_windows cuts a series into a forecasting problem.
struct ForecastOptions {
  explicit ForecastOptions(int64_t sequence_length_) : sequence_length_(sequence_length_) {}
  /// Steps per input window.
  TORCH_ARG(int64_t, sequence_length);
  /// Steps between the window's samples (Keras sampling_rate, default 1).
  TORCH_ARG(int64_t, sampling_rate) = 1;
  /// Steps between window starts (Keras sequence_stride, default 1).
  TORCH_ARG(int64_t, sequence_stride) = 1;
  /// The column of a (T, F) series that is forecast (default 0); every column is an input feature.
  TORCH_ARG(int64_t, target_column) = 0;
  /// Fraction of the steps, the LAST ones, whose windows validate (default 0.2; in (0, 1)).
  TORCH_ARG(double, validation_split) = 0.2;
  /// Subtract the training steps' mean and divide by their standard deviation, per feature (default true).
  TORCH_ARG(bool, standardize) = true;
};

/// A series cut into next-step windows: train and validation Arrays (x (N, sequence_length, F), y (N, 1),
/// float32, standardized when asked), and the target column's mean and scale (0 and 1 when not
/// standardized) to bring errors back to the series' units.
struct ForecastWindows {
  Arrays train, validation;
  double mean = 0.0, scale = 1.0;
  int64_t target_column = 0;
};

/// Keras's "Example 2" (temporal regression): with delay d = (L − 1)·r + 1, inputs = series[: T − d],
/// targets = series[d :, target_column], so each window's target is the step right after its last
/// sample. The first v = floor((T − d)·(1 − validation_split)) steps train (windows with end_index = v,
/// their targets ≤ series[v]), the windows from start_index = v validate (chronological, not shuffled).
/// Standardization statistics (mean, population std as NumPy's std) come from series[: v] only.
/// `series` (T) (one feature) or (T, F). Errors: ConfigError for a series of another rank, a target_column
/// outside [0, F), validation_split outside (0, 1), a series too short to give both parts a window
/// (naming the lengths), a constant training part when standardizing; timeseries_dataset_from_array's.
ForecastWindows next_step_windows(const at::Tensor& series, const ForecastOptions& options);

/// Column `column` of a (T, F) series, as a (T) series (a (T) series is column 0 of itself), e.g. the value
/// column of a CSV whose first column holds dates or years. Errors: ConfigError for a series that is not
/// (T) or (T, F), or a column outside [0, F), naming it.
at::Tensor series_column(const at::Tensor& series, int64_t column);

/// The naive forecast's mean absolute error: each window's last step of `target_column` predicts its target
/// (x (N, L, F), y (N, 1) or (N)), in the arrays' units. Errors: ConfigError for other shapes or N = 0.
double last_value_mae(const Arrays& windows, int64_t target_column = 0);

/// Mean absolute error of `predictions` (N, 1) or (N) against `targets` of the same length.
/// Errors: ConfigError for different lengths or N = 0.
double mean_absolute_error(const at::Tensor& predictions, const at::Tensor& targets);

}  // namespace torchfit::data
