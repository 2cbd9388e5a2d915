#include <cmath>

#include <ATen/ATen.h>

#include <torchfit/data/timeseries.h>
#include <torchfit/error.h>

namespace torchfit::data {
namespace {

std::string forecast_num(int64_t v) { return std::to_string(v); }

at::Tensor as_matrix(const at::Tensor& series) {
  if (!series.defined() || (series.dim() != 1 && series.dim() != 2)) {
    throw ConfigError("next_step_windows: the series must be (T) or (T, features), got " +
                      (series.defined() ? std::to_string(series.dim()) + "-d" : std::string("no array")));
  }
  const at::Tensor s = series.to(at::kFloat).cpu();
  return s.dim() == 1 ? s.unsqueeze(1) : s;
}

// The training steps' statistics, per feature (NumPy's mean and std, ddof 0).
std::pair<at::Tensor, at::Tensor> train_statistics(const at::Tensor& train_steps) {
  const at::Tensor mean = train_steps.to(at::kDouble).mean(0);
  const at::Tensor std = (train_steps.to(at::kDouble) - mean).pow(2).mean(0).sqrt();
  if ((std == 0).any().item<bool>()) {
    throw ConfigError(
        "next_step_windows: a feature is constant over the training steps; it cannot be "
        "standardized (turn standardize off)");
  }
  return {mean.to(at::kFloat), std.to(at::kFloat)};
}

}  // namespace

ForecastWindows next_step_windows(const at::Tensor& series, const ForecastOptions& o) {
  at::Tensor s = as_matrix(series);
  const int64_t steps = s.size(0), features = s.size(1);
  if (o.target_column() < 0 || o.target_column() >= features) {
    throw ConfigError("next_step_windows: target_column " + forecast_num(o.target_column()) + " is outside [0, " +
                      forecast_num(features) + ")");
  }
  if (!(o.validation_split() > 0.0 && o.validation_split() < 1.0)) {
    throw ConfigError("next_step_windows: validation_split must be in (0, 1), got " +
                      std::to_string(o.validation_split()));
  }
  const int64_t span = (o.sequence_length() - 1) * o.sampling_rate(), delay = span + 1;
  const int64_t inputs = steps - delay;
  const auto split = static_cast<int64_t>(std::floor(static_cast<double>(inputs) * (1.0 - o.validation_split())));
  if (o.sequence_length() <= 0 || split - span <= 0 || inputs - split - span <= 0) {
    throw ConfigError("next_step_windows: a series of " + forecast_num(steps) + " steps is too short for windows of " +
                      forecast_num(o.sequence_length()) + " steps (sampling_rate " + forecast_num(o.sampling_rate()) +
                      ") in both the training and the validation part (validation_split " +
                      std::to_string(o.validation_split()) + ")");
  }
  ForecastWindows w;
  w.target_column = o.target_column();
  if (o.standardize()) {
    const auto [mean, scale] = train_statistics(s.slice(0, 0, split));
    s = (s - mean) / scale;
    w.mean = mean[o.target_column()].item<double>();
    w.scale = scale[o.target_column()].item<double>();
  }
  const at::Tensor data = s.slice(0, 0, inputs);
  const at::Tensor targets = s.slice(0, delay, steps).select(1, o.target_column()).unsqueeze(1);
  TimeseriesOptions t(o.sequence_length());
  t.sampling_rate(o.sampling_rate()).sequence_stride(o.sequence_stride()).batch_size(std::nullopt);
  w.train = timeseries_dataset_from_array(data, targets, TimeseriesOptions(t).end_index(split)).arrays;
  w.validation = timeseries_dataset_from_array(data, targets, TimeseriesOptions(t).start_index(split)).arrays;
  return w;
}

at::Tensor series_column(const at::Tensor& series, int64_t column) {
  if (!series.defined() || (series.dim() != 1 && series.dim() != 2)) {
    throw ConfigError("series_column: the series must be (T) or (T, features)");
  }
  const int64_t columns = series.dim() == 1 ? 1 : series.size(1);
  if (column < 0 || column >= columns) {
    throw ConfigError("series column " + forecast_num(column) + " is outside [0, " + forecast_num(columns) +
                      ") (the file has " + forecast_num(columns) + " column" + (columns == 1 ? "" : "s") +
                      ", counted from 0)");
  }
  return series.dim() == 1 ? series : series.select(1, column).contiguous();
}

double last_value_mae(const Arrays& windows, int64_t target_column) {
  const at::Tensor& x = windows.x;
  if (!x.defined() || x.dim() != 3 || x.size(0) == 0 || !windows.y.defined()) {
    throw ConfigError("last_value_mae: needs windows x (N > 0, steps, features) and targets y");
  }
  if (target_column < 0 || target_column >= x.size(2)) {
    throw ConfigError("last_value_mae: target_column " + forecast_num(target_column) + " is outside [0, " +
                      forecast_num(x.size(2)) + ")");
  }
  return mean_absolute_error(x.select(1, x.size(1) - 1).select(1, target_column), windows.y);
}

double mean_absolute_error(const at::Tensor& predictions, const at::Tensor& targets) {
  if (!predictions.defined() || !targets.defined() || predictions.dim() == 0 || targets.dim() == 0 ||
      predictions.size(0) != targets.size(0) || predictions.size(0) == 0) {
    throw ConfigError("mean_absolute_error: predictions and targets need the same N > 0 samples");
  }
  const at::Tensor p = predictions.to(at::kDouble).cpu().reshape({predictions.size(0), -1});
  const at::Tensor y = targets.to(at::kDouble).cpu().reshape({targets.size(0), -1});
  if (p.size(1) != y.size(1)) {
    throw ConfigError("mean_absolute_error: predictions have " + forecast_num(p.size(1)) +
                      " values per sample, targets " + forecast_num(y.size(1)));
  }
  return (p - y).abs().mean().item<double>();
}

}  // namespace torchfit::data
