#include <torchfit/data/timeseries.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <ATen/ATen.h>

#include <torchfit/data/numpy_random.h>
#include <torchfit/error.h>

namespace torchfit::data {
namespace {

std::string num(int64_t v) { return std::to_string(v); }

// Keras's checks of start_index and end_index, in its order and with its messages. Keras tests them with
// `if start_index:` / `if end_index:`, so 0 skips them; an end_index of 0 is refused here (Keras would
// yield no window).
void check_bounds(const TimeseriesOptions& o, int64_t len) {
  const int64_t start = o.start_index().value_or(0);
  if (start != 0) {
    if (start < 0) throw ConfigError("`start_index` must be 0 or greater. Received: start_index=" + num(start));
    if (start >= len) {
      throw ConfigError("`start_index` must be lower than the length of the data. Received: start_index=" + num(start) +
                        ", for data of length " + num(len));
    }
  }
  if (!o.end_index() || *o.end_index() == 0) return;
  const int64_t end = *o.end_index();
  if (start != 0 && end <= start) {
    throw ConfigError("`end_index` must be higher than `start_index`. Received: start_index=" + num(start) +
                      ", and end_index=" + num(end));
  }
  if (end >= len) {
    throw ConfigError("`end_index` must be lower than the length of the data. Received: end_index=" + num(end) +
                      ", for data of length " + num(len));
  }
  if (end <= 0) throw ConfigError("`end_index` must be higher than 0. Received: end_index=" + num(end));
}

void check_period(const char* name, int64_t value, int64_t len) {
  const std::string n = name;
  if (value <= 0) {
    throw ConfigError("`" + n + "` must be higher than 0. Received: " + n + "=" + num(value));
  }
  if (value >= len) {
    throw ConfigError("`" + n + "` must be lower than the length of the data. Received: " + n + "=" + num(value) +
                      ", for data of length " + num(len));
  }
}

void check_options(const at::Tensor& data, const at::Tensor& targets, const TimeseriesOptions& o) {
  if (!data.defined() || data.dim() == 0) {
    throw ConfigError("timeseries_dataset_from_array: `data` must have a time axis (axis 0)");
  }
  if (targets.defined() && targets.dim() == 0) {
    throw ConfigError("timeseries_dataset_from_array: `targets` is a scalar; it needs one entry per time step");
  }
  if (o.sequence_length() <= 0) {
    throw ConfigError("`sequence_length` must be higher than 0. Received: sequence_length=" + num(o.sequence_length()));
  }
  if (o.batch_size() && *o.batch_size() <= 0) {
    throw ConfigError("`batch_size` must be higher than 0 (or None: unbatched). Received: batch_size=" +
                      num(*o.batch_size()));
  }
  const int64_t len = data.size(0);
  check_bounds(o, len);
  if (o.end_index() && *o.end_index() == 0) {
    throw ConfigError("`end_index` must be higher than 0. Received: end_index=0");
  }
  check_period("sampling_rate", o.sampling_rate(), len);
  check_period("sequence_stride", o.sequence_stride(), len);
}

// Keras's start positions (relative to start_index): arange(0, num_seqs, stride), then
// RandomState(seed).shuffle when asked.
std::vector<int64_t> start_positions(const at::Tensor& targets, const TimeseriesOptions& o, int64_t len) {
  const int64_t start = o.start_index().value_or(0), end = o.end_index().value_or(len);
  int64_t num_seqs = end - start - (o.sequence_length() - 1) * o.sampling_rate();
  if (targets.defined()) num_seqs = std::min(num_seqs, targets.size(0));
  std::vector<int64_t> positions;
  for (int64_t p = 0; p < num_seqs; p += o.sequence_stride()) positions.push_back(p);
  if (o.shuffle()) {
    int64_t seed = 0;
    if (o.seed()) {
      seed = *o.seed();
    } else {  // Keras: seed = np.random.randint(1e6)
      std::random_device device;
      seed = std::uniform_int_distribution<int64_t>(0, 999999)(device);
    }
    NumpyRandomState rng(seed);
    rng.shuffle(positions);
  }
  return positions;
}

at::Tensor gather_targets(const at::Tensor& targets, const at::Tensor& starts) {
  if (!targets.defined()) return {};
  if (starts.numel() > 0) {
    const int64_t last = starts.max().item<int64_t>();
    if (last >= targets.size(0)) {
      throw ConfigError("timeseries_dataset_from_array: `targets` has " + num(targets.size(0)) +
                        " entries but the window starting at data index " + num(last) + " needs targets[" + num(last) +
                        "] (targets[i] is the target of the window starting at data[i])");
    }
  }
  return targets.index_select(0, starts);
}

}  // namespace

TimeseriesDataset timeseries_dataset_from_array(const at::Tensor& data, const at::Tensor& targets,
                                                const TimeseriesOptions& options) {
  check_options(data, targets, options);
  TimeseriesDataset ds;
  ds.batch_size = options.batch_size();
  const int64_t start = options.start_index().value_or(0);
  for (int64_t p : start_positions(targets, options, data.size(0))) ds.start_positions.push_back(start + p);
  const auto n = static_cast<int64_t>(ds.start_positions.size());
  const at::Tensor starts = at::tensor(ds.start_positions, at::kLong).reshape({n});
  const at::Tensor steps = at::arange(options.sequence_length(), at::kLong) * options.sampling_rate();
  const at::Tensor index = (starts.unsqueeze(1) + steps.unsqueeze(0)).reshape({-1});
  std::vector<int64_t> shape{n, options.sequence_length()};
  shape.insert(shape.end(), data.sizes().begin() + 1, data.sizes().end());
  ds.arrays = Arrays(data.index_select(0, index.to(data.device())).reshape(shape),
                     gather_targets(targets, starts.to(targets.defined() ? targets.device() : data.device())));
  return ds;
}

std::vector<Arrays> TimeseriesDataset::batches() const {
  std::vector<Arrays> out;
  const int64_t n = size();
  auto part = [](const at::Tensor& t, int64_t a, int64_t b) { return t.defined() ? t.slice(0, a, b) : t; };
  auto pick = [](const at::Tensor& t, int64_t i) { return t.defined() ? t.select(0, i) : t; };
  if (!batch_size) {
    for (int64_t i = 0; i < n; ++i) out.emplace_back(pick(arrays.x, i), pick(arrays.y, i));
    return out;
  }
  for (int64_t a = 0; a < n; a += *batch_size) {
    const int64_t b = std::min(n, a + *batch_size);
    out.emplace_back(part(arrays.x, a, b), part(arrays.y, a, b));
  }
  return out;
}

TimeseriesDataset timeseries_dataset_from_files(const std::string& data_spec, const std::string& targets_spec,
                                                const TimeseriesOptions& options, char separator) {
  const at::Tensor data = load_array(data_spec, separator);
  const at::Tensor targets = targets_spec.empty() ? at::Tensor() : load_array(targets_spec, separator);
  return timeseries_dataset_from_array(data, targets, options);
}

}  // namespace torchfit::data
