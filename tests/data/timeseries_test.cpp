// data/timeseries.h: timeseries_dataset_from_array against tests/data/reference/timeseries_reference.py,
// Keras 3's function rewritten in NumPy from keras/src/utils/timeseries_dataset_utils.py (windows, targets,
// start/end index, stride, sampling rate, the seeded RandomState shuffle, Keras's error messages), the
// file loaders, and the next-step forecasting arrangement (Keras's docstring Example 2) against NumPy.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include <ATen/ATen.h>

#include <torchfit/data/timeseries.h>
#include <torchfit/error.h>

#include "support/error_message.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit::timeseries_test {
using data::TimeseriesOptions;
using nlohmann::json;

const std::string kScript = std::string(TORCHFIT_SOURCE_DIR) + "/tests/data/reference/timeseries_reference.py";

std::string config_error(const std::function<void()>& f) {
  return testing::error_message<ConfigError>(f, "ConfigError");
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// One argument combination: the data (T, 2) = (t, 100 + t) and targets 1000 + t of length `targets`
// (0: none), the options as JSON for the reference (null = Keras's None).
struct Case {
  int64_t steps, targets, sequence_length, stride = 1, rate = 1;
  std::optional<int64_t> start, end;
  bool shuffle = false;
  int64_t seed = 0;
};

at::Tensor case_data(const Case& c) {
  const at::Tensor t = at::arange(c.steps, at::kDouble);
  return at::stack({t, t + 100}, 1);
}

at::Tensor case_targets(const Case& c) {
  return c.targets == 0 ? at::Tensor() : at::arange(c.targets, at::kDouble) + 1000;
}

TimeseriesOptions case_options(const Case& c) {
  TimeseriesOptions o(c.sequence_length);
  o.sequence_stride(c.stride).sampling_rate(c.rate).shuffle(c.shuffle).seed(c.seed);
  o.start_index(c.start).end_index(c.end);
  return o;
}

json case_json(const Case& c) {
  auto opt = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  const at::Tensor targets = case_targets(c);
  return {{"data", testing::to_json(case_data(c))},
          {"targets", targets.defined() ? testing::to_json(targets) : json(nullptr)},
          {"sequence_length", c.sequence_length},
          {"sequence_stride", c.stride},
          {"sampling_rate", c.rate},
          {"start_index", opt(c.start)},
          {"end_index", opt(c.end)},
          {"shuffle", c.shuffle},
          {"seed", c.seed}};
}

testing::PythonResult reference(const std::vector<Case>& cases) {
  json input = {{"cases", json::array()}};
  for (const auto& c : cases) input["cases"].push_back(case_json(c));
  return testing::run_python({"numpy"}, "exec(open(" + json(kScript).dump() + ").read())", input);
}

at::Tensor from_json(const json& j, const std::vector<int64_t>& shape) {
  std::vector<double> flat;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_array()) {
      for (const auto& e : v) walk(e);
    } else {
      flat.push_back(v.get<double>());
    }
  };
  walk(j);
  return at::tensor(flat, at::kDouble).reshape(shape);
}

void expect_matches(const data::TimeseriesDataset& ds, const json& ref, const Case& c) {
  const auto n = static_cast<int64_t>(ref["starts"].size());
  ASSERT_EQ(ds.size(), n);
  EXPECT_EQ(ds.start_positions, ref["starts"].get<std::vector<int64_t>>());
  ASSERT_EQ(ds.arrays.x.sizes(), at::IntArrayRef({n, c.sequence_length, 2}));
  if (n > 0) EXPECT_TRUE(at::equal(ds.arrays.x, from_json(ref["x"], {n, c.sequence_length, 2})));
  if (c.targets == 0) {
    EXPECT_FALSE(ds.arrays.y.defined());
    EXPECT_TRUE(ref["y"].is_null());
  } else {
    ASSERT_EQ(ds.arrays.y.sizes(), at::IntArrayRef({n}));
    if (n > 0) EXPECT_TRUE(at::equal(ds.arrays.y, from_json(ref["y"], {n})));
  }
}

TEST(Timeseries, WindowsAndTargetsAreKeras3s) {
  std::vector<Case> cases = {
      {99, 0, 10, 3, 2},                     // Keras's docstring Example 1: [0 2 … 18] … [78 … 96]
      {20, 20, 4},                           // defaults, targets as long as the data
      {50, 50, 3, 2, 2, 5, 40},              // start and end index, stride and rate
      {50, 60, 5, 1, 3, std::nullopt, 30},   // targets longer than the data, end index alone
      {30, 10, 4},                           // targets shorter: min(num_seqs, len(targets)) windows
      {30, 30, 4, 7, 1, 0, std::nullopt},    // start_index 0 given (Keras skips its checks)
      {40, 40, 6, 1, 1, 12, std::nullopt},   // start index alone
      {10, 10, 20},                          // no window fits: empty, as Keras
      {64, 64, 5, 2, 1, 3, 60, true, 1337},  // shuffled start positions, seeded
      {200, 0, 8, 1, 2, std::nullopt, std::nullopt, true, 7},  // shuffled without targets
  };
  const auto ref = reference(cases);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    ASSERT_FALSE(ref.out[k].contains("error")) << ref.out[k]["error"];
    const Case& c = cases[k];
    expect_matches(data::timeseries_dataset_from_array(case_data(c), case_targets(c), case_options(c)), ref.out[k], c);
  }
}

TEST(Timeseries, KerasDocstringExample1Windows) {
  // Stated in Keras's docstring, independent of any reference run: indices 0 … 98, L 10, rate 2, stride 3.
  const at::Tensor idx = at::arange(99, at::kLong);
  const auto ds = data::timeseries_dataset_from_array(
      idx, {}, TimeseriesOptions(10).sampling_rate(2).sequence_stride(3).batch_size(std::nullopt));
  ASSERT_EQ(ds.size(), 27);
  EXPECT_TRUE(at::equal(ds.arrays.x[0], at::arange(0, 20, 2, at::kLong)));
  EXPECT_TRUE(at::equal(ds.arrays.x[1], at::arange(3, 23, 2, at::kLong)));
  EXPECT_TRUE(at::equal(ds.arrays.x[26], at::arange(78, 98, 2, at::kLong)));
  EXPECT_EQ(ds.arrays.x.scalar_type(), at::kLong);  // Keras keeps the dtype
}

TEST(Timeseries, ShuffleIsASeededPermutationOfTheChronologicalWindows) {
  const at::Tensor data = at::arange(100, at::kFloat);
  const auto plain = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(5));
  const auto a = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(5).shuffle(true).seed(3));
  const auto b = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(5).shuffle(true).seed(3));
  const auto c = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(5).shuffle(true).seed(4));
  const auto unseeded = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(5).shuffle(true));
  EXPECT_TRUE(at::equal(a.arrays.x, b.arrays.x));
  EXPECT_NE(a.start_positions, c.start_positions);
  EXPECT_NE(a.start_positions, plain.start_positions);
  for (const auto* ds : {&a, &c, &unseeded}) {
    EXPECT_EQ(std::set<int64_t>(ds->start_positions.begin(), ds->start_positions.end()),
              std::set<int64_t>(plain.start_positions.begin(), plain.start_positions.end()));
    const at::Tensor order = at::tensor(ds->start_positions, at::kLong);
    EXPECT_TRUE(at::equal(ds->arrays.x, plain.arrays.x.index_select(0, order)));
    EXPECT_TRUE(at::equal(ds->arrays.y, plain.arrays.y.index_select(0, order)));
  }
}

TEST(Timeseries, BatchesAsKerasIteratesThem) {
  const at::Tensor data = at::arange(13, at::kFloat);
  const auto batched = data::timeseries_dataset_from_array(data, data, TimeseriesOptions(4).batch_size(4));
  const auto batches = batched.batches();
  ASSERT_EQ(batches.size(), 3u);  // 10 windows: 4, 4, 2
  EXPECT_EQ(batches[2].x.sizes(), at::IntArrayRef({2, 4}));
  EXPECT_TRUE(at::equal(batches[2].y, at::tensor({8.0f, 9.0f})));
  EXPECT_EQ(data::timeseries_dataset_from_array(data, data, TimeseriesOptions(4)).batches().size(), 1u);
  const auto single = data::timeseries_dataset_from_array(data, {}, TimeseriesOptions(4).batch_size(std::nullopt));
  const auto elements = single.batches();
  ASSERT_EQ(elements.size(), 10u);  // batch_size None: one element per window, no batch axis
  EXPECT_TRUE(at::equal(elements[9].x, at::arange(9, 13, at::kFloat)));
  EXPECT_FALSE(elements[9].y.defined());
}

TEST(Timeseries, BadArgumentsGiveKerasMessages) {
  std::vector<Case> cases = {
      {20, 0, 3, 1, 1, -1},                // start_index < 0
      {20, 0, 3, 1, 1, 20},                // start_index ≥ len
      {20, 0, 3, 1, 1, 8, 8},              // end_index ≤ start_index
      {20, 0, 3, 1, 1, std::nullopt, 20},  // end_index ≥ len
      {20, 0, 3, 1, 1, std::nullopt, -3},  // end_index ≤ 0
      {20, 0, 3, 1, 0},                    // sampling_rate 0
      {20, 0, 3, 1, 20},                   // sampling_rate ≥ len
      {20, 0, 3, 0},                       // sequence_stride 0
      {20, 0, 3, -2},                      // sequence_stride < 0
      {20, 0, 3, 25},                      // sequence_stride ≥ len
  };
  const auto ref = reference(cases);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE("case " + std::to_string(k));
    ASSERT_TRUE(ref.out[k].contains("error")) << "the reference accepted case " << k;
    const Case& c = cases[k];
    const std::string ours =
        config_error([&] { data::timeseries_dataset_from_array(case_data(c), case_targets(c), case_options(c)); });
    EXPECT_EQ(rtrim(ours), rtrim(ref.out[k]["error"].get<std::string>()));
  }
}

TEST(Timeseries, ArgumentsKerasDoesNotCheckAreRefusedByName) {
  const at::Tensor data = at::arange(30, at::kFloat);
  auto error = [&](const at::Tensor& d, const at::Tensor& t, const TimeseriesOptions& o) {
    return config_error([&] { data::timeseries_dataset_from_array(d, t, o); });
  };
  EXPECT_NE(error(data, data, TimeseriesOptions(0)).find("`sequence_length` must be higher than 0"), std::string::npos);
  EXPECT_NE(error(data, data, TimeseriesOptions(-4)).find("sequence_length=-4"), std::string::npos);
  EXPECT_NE(error(data, data, TimeseriesOptions(3).batch_size(0)).find("`batch_size`"), std::string::npos);
  EXPECT_NE(error(data, data, TimeseriesOptions(3).end_index(0)).find("`end_index` must be higher than 0"),
            std::string::npos);
  EXPECT_NE(error(data, data, TimeseriesOptions(3).shuffle(true).seed(-1)).find("eed"), std::string::npos);
  EXPECT_NE(error(at::scalar_tensor(1.0), {}, TimeseriesOptions(3)).find("`data`"), std::string::npos);
  EXPECT_NE(error(data, at::scalar_tensor(1.0), TimeseriesOptions(3)).find("`targets`"), std::string::npos);
  // Targets shorter than start_index + window: Keras fails in tf.gather; here the targets are named.
  const std::string short_targets = error(data, at::arange(10, at::kFloat), TimeseriesOptions(4).start_index(12));
  EXPECT_NE(short_targets.find("`targets` has 10 entries"), std::string::npos) << short_targets;
}

TEST(Timeseries, FilesGiveTheSameWindowsAsArrays) {
  testing::TempDir dir("timeseries");
  {
    std::ofstream csv(dir.file("series.csv"));
    csv << "\"YEAR\",\"VALUE\"\n";
    for (int t = 0; t < 25; ++t) csv << 1700 + t << "," << t * t << "\n";
    std::ofstream y(dir.file("y.csv"));
    for (int t = 0; t < 25; ++t) y << 0.5 * t << "\n";
  }
  const TimeseriesOptions o = TimeseriesOptions(6).sequence_stride(2).start_index(1);
  const auto from_files = data::timeseries_dataset_from_files(dir.file("series.csv"), dir.file("y.csv"), o);
  const at::Tensor t = at::arange(25, at::kFloat);
  const auto from_arrays = data::timeseries_dataset_from_array(at::stack({t + 1700, t * t}, 1), t * 0.5, o);
  EXPECT_TRUE(at::equal(from_files.arrays.x, from_arrays.arrays.x));
  EXPECT_TRUE(at::equal(from_files.arrays.y, from_arrays.arrays.y));
  EXPECT_NE(testing::error_message<IoError>([&] {
              data::timeseries_dataset_from_files(dir.file("none.npy"), "", o);
            }).find("none.npy"),
            std::string::npos);
}

TEST(Timeseries, NextStepWindowsAreKerasExample2WithATrainValidationSplit) {
  // NumPy: delay d = (L-1)*r + 1, inputs series[:-d], targets series[d:, col], split v = floor((T-d)(1-f)),
  // statistics of series[:v], train windows end_index = v, validation windows start_index = v.
  const at::Tensor series =
      at::stack({at::sin(at::arange(60, at::kDouble) * 0.4) * 10 + 3, at::arange(60, at::kDouble).pow(1.5) * 0.1}, 1);
  const auto ref =
      testing::run_python({"numpy"}, "exec(open(" + json(kScript).dump() + ").read().split('out = []')[0])\n" + R"(
s = np.asarray(data["series"]); L, r, f, col = 5, 2, 0.25, 1
d = (L - 1) * r + 1; v = int(np.floor((len(s) - d) * (1 - f)))
mean, std = s[:v].mean(0), s[:v].std(0); z = (s - mean) / std
case = {"data": z[:-d].tolist(), "targets": z[d:, col].tolist(), "sequence_length": L, "sequence_stride": 1,
        "sampling_rate": r, "shuffle": False, "seed": 0}
tr = windows(dict(case, start_index=None, end_index=v)); va = windows(dict(case, start_index=v, end_index=None))
xv, yv = np.asarray(va["x"]), np.asarray(va["y"])
out = {"train_x": tr["x"], "train_y": tr["y"], "val_x": va["x"], "val_y": va["y"], "mean": mean[col],
       "scale": std[col], "naive": float(np.abs(xv[:, -1, col] - yv).mean())}
)",
                          {{"series", testing::to_json(series)}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const auto w = data::next_step_windows(
      series, data::ForecastOptions(5).sampling_rate(2).validation_split(0.25).target_column(1));
  const auto nt = static_cast<int64_t>(ref.out["train_y"].size()), nv = static_cast<int64_t>(ref.out["val_y"].size());
  ASSERT_EQ(w.train.x.sizes(), at::IntArrayRef({nt, 5, 2}));
  ASSERT_EQ(w.validation.x.sizes(), at::IntArrayRef({nv, 5, 2}));
  EXPECT_TRUE(at::allclose(w.train.x.to(at::kDouble), from_json(ref.out["train_x"], {nt, 5, 2}), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(w.train.y.to(at::kDouble), from_json(ref.out["train_y"], {nt, 1}), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(w.validation.x.to(at::kDouble), from_json(ref.out["val_x"], {nv, 5, 2}), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(w.validation.y.to(at::kDouble), from_json(ref.out["val_y"], {nv, 1}), 1e-5, 1e-5));
  EXPECT_NEAR(w.mean, ref.out["mean"].get<double>(), 1e-4);
  EXPECT_NEAR(w.scale, ref.out["scale"].get<double>(), 1e-4);
  EXPECT_NEAR(data::last_value_mae(w.validation, 1), ref.out["naive"].get<double>(), 1e-5);
}

TEST(Timeseries, NextStepWindowsRefuseBadInputByName) {
  const at::Tensor s = at::arange(30, at::kFloat);
  auto error = [](const at::Tensor& x, const data::ForecastOptions& o) {
    return config_error([&] { data::next_step_windows(x, o); });
  };
  EXPECT_NE(error(s, data::ForecastOptions(20)).find("too short"), std::string::npos);
  EXPECT_NE(error(s, data::ForecastOptions(3).target_column(1)).find("target_column 1"), std::string::npos);
  EXPECT_NE(error(s, data::ForecastOptions(3).validation_split(1.0)).find("validation_split"), std::string::npos);
  EXPECT_NE(error(at::zeros({30, 2, 2}), data::ForecastOptions(3)).find("(T) or (T, features)"), std::string::npos);
  EXPECT_NE(error(at::ones({30}), data::ForecastOptions(3)).find("constant"), std::string::npos);
  EXPECT_NE(config_error([] {
              data::mean_absolute_error(at::zeros({3, 1}), at::zeros({4, 1}));
            }).find("same N"),
            std::string::npos);
}

}  // namespace torchfit::timeseries_test
