// data/arrays.h: Keras's validation_split against NumPy running Keras 3's train_validation_split rule, the
// checks of the arrays, TensorIterator with sample weights, and arrays read from .npy/.npz/CSV files.
#include <gtest/gtest.h>

#include <fstream>

#include <ATen/ATen.h>

#include <torchfit/data/arrays.h>
#include <torchfit/data/batch_iterator.h>
#include <torchfit/error.h>
#include <torchfit/io/npy.h>

#include "support/error_message.h"
#include "support/python_reference.h"
#include "support/temp_dir.h"

namespace torchfit::arrays_test {
using data::Arrays;

namespace {

std::string config_error(const std::function<void()>& f) {
  return testing::error_message<ConfigError>(f, "ConfigError");
}

std::string io_error(const std::function<void()>& f) { return testing::error_message<IoError>(f, "IoError"); }

}  // namespace

TEST(Arrays, ValidationSplitTakesTheLastFractionAsKeras3) {
  // Keras 3 (keras/src/trainers/data_adapters/array_slicing.py): split_at = floor(N * (1 - v)),
  // train = a[:split_at], validation = a[split_at:]; NumPy applies it to index arrays.
  nlohmann::json cases = nlohmann::json::array();
  for (int64_t n : {2, 3, 7, 10, 100, 442, 1001})
    for (double v : {0.1, 0.2, 0.25, 1.0 / 3, 0.5, 0.7, 0.99}) cases.push_back({{"n", n}, {"v", v}});
  const auto ref = torchfit::testing::run_python({"numpy", "math"}, R"(
import numpy as np
out = []
for c in data:
    idx = np.arange(c["n"])
    split_at = int(math.floor(c["n"] * (1.0 - c["v"])))
    if split_at == 0 or split_at == c["n"]:
        out.append(None)
    else:
        out.append([idx[:split_at].tolist(), idx[split_at:].tolist()])
)",
                                                 cases);
  TORCHFIT_REQUIRE_PYTHON(ref);
  for (size_t k = 0; k < cases.size(); ++k) {
    const int64_t n = cases[k]["n"];
    const double v = cases[k]["v"];
    SCOPED_TRACE(cases[k].dump());
    const at::Tensor idx = at::arange(n, at::kLong);
    Arrays a(idx.to(at::kFloat).unsqueeze(1), idx, idx.to(at::kFloat) * 0.5);
    if (ref.out[k].is_null()) {
      EXPECT_NE(config_error([&] { data::train_validation_split(a, v); }).find("not sufficient to split"),
                std::string::npos);
      continue;
    }
    const auto [train, val] = data::train_validation_split(a, v);
    auto as_vector = [](const at::Tensor& t) {
      return std::vector<int64_t>(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
    };
    EXPECT_EQ(as_vector(train.y.contiguous()), ref.out[k][0].get<std::vector<int64_t>>());
    EXPECT_EQ(as_vector(val.y.contiguous()), ref.out[k][1].get<std::vector<int64_t>>());
    EXPECT_TRUE(val.x.squeeze(1).equal(val.y.to(at::kFloat)));  // x, y and the weights split at one index
    EXPECT_TRUE(val.sample_weight.equal(val.y.to(at::kFloat) * 0.5));
  }
  for (double bad : {0.0, 1.0, -0.2, 1.5, std::nan("")}) {
    EXPECT_NE(config_error([&] {
                data::train_validation_split(Arrays(at::zeros({10, 1})), bad);
              }).find("(0, 1)"),
              std::string::npos)
        << bad;
  }
}

TEST(Arrays, StandardizeChecksLengthsAndCastsToFloat32) {
  const Arrays ok =
      data::standardize_arrays(Arrays(at::ones({5, 2}, at::kDouble), at::arange(5), at::ones({5}, at::kDouble)), "fit");
  EXPECT_EQ(ok.x.scalar_type(), at::kFloat);
  EXPECT_EQ(ok.y.scalar_type(), at::kLong);  // integer labels kept
  EXPECT_EQ(ok.sample_weight.scalar_type(), at::kFloat);
  const std::string y_len = config_error([] {
    data::standardize_arrays(Arrays(at::ones({5, 2}), at::ones({4})), "fit");
  });
  EXPECT_NE(y_len.find("fit: x has 5 samples but y has 4"), std::string::npos) << y_len;
  const std::string w_len = config_error([] {
    data::standardize_arrays(Arrays(at::ones({5, 2}), at::ones({5}), at::ones({6})), "fit");
  });
  EXPECT_NE(w_len.find("but sample_weight has 6"), std::string::npos) << w_len;
  EXPECT_NE(config_error([] {
              data::standardize_arrays(Arrays(at::ones({5, 2})), "fit");
            }).find("y (the targets)"),
            std::string::npos);
  EXPECT_NO_THROW(data::standardize_arrays(Arrays(at::ones({5, 2})), "predict", false));
  EXPECT_NE(config_error([] {
              data::standardize_arrays(Arrays(at::ones({0, 2}), at::ones({0})), "fit");
            }).find("no samples"),
            std::string::npos);
  EXPECT_NE(config_error([] {
              data::standardize_arrays(Arrays(at::ones({3}), at::ones({3}), at::arange(3)), "fit");
            }).find("floating-point"),
            std::string::npos);
  const at::Tensor nan_w = at::tensor({1.0f, NAN, 1.0f});
  EXPECT_NE(
      config_error([&] { data::standardize_arrays(Arrays(at::ones({3}), at::ones({3}), nan_w), "fit"); }).find("NaN"),
      std::string::npos);
}

TEST(Arrays, TensorIteratorKeepsWeightsWithTheirSamples) {
  const at::Tensor x = at::arange(10, at::kFloat).unsqueeze(1);
  data::TensorIterator it(Arrays(x, at::arange(10), at::arange(10, at::kFloat) / 10), 4, /*shuffle=*/true, 3);
  for (int b = 0; b < 6; ++b) {
    const data::Batch batch = it.next();
    ASSERT_TRUE(batch.sample_weight.defined());
    EXPECT_TRUE(batch.sample_weight.equal(batch.x.squeeze(1) / 10));
    EXPECT_TRUE(batch.y.to(at::kFloat).equal(batch.x.squeeze(1)));
  }
  data::TensorIterator plain(x, at::arange(10), 4);
  EXPECT_FALSE(plain.next().sample_weight.defined());
  EXPECT_NE(config_error([&] {
              data::TensorIterator(Arrays(x, at::arange(10), at::ones({9})), 4);
            }).find("sample_weight has 9"),
            std::string::npos);
}

TEST(Arrays, IteratorSplitIsTheArraysSplitAndOthersRefuse) {
  const at::Tensor x = at::arange(10, at::kFloat).unsqueeze(1);
  data::TensorIterator it(Arrays(x, at::arange(10), at::ones({10})), 3, /*shuffle=*/true, 5);
  auto [train, val] = it.train_validation_split(0.25);  // floor(10 · 0.75) = 7 train, 3 validate
  EXPECT_EQ(train->samples(), 7);
  EXPECT_EQ(val->samples(), 3);
  EXPECT_EQ(train->batch_size(), 3);
  EXPECT_EQ(train->stream_config().at("shuffle"), "true");
  EXPECT_EQ(val->stream_config().at("shuffle"), "false");
  at::Tensor seen = val->next().y;
  EXPECT_TRUE(seen.equal(at::arange(7, 10)));
  EXPECT_TRUE(val->next().y.equal(at::arange(7, 10)));  // next pass, same order
  train->reset();
  at::Tensor pass = at::cat({train->next().y, train->next().y, train->next().y});
  EXPECT_TRUE(std::get<0>(pass.sort()).equal(at::arange(7)));  // a shuffled pass over the first 7 only
  struct Endless : data::BatchIterator {
    data::Batch next() override { return {}; }
    int64_t samples() const override { return 4; }
    int64_t batch_size() const override { return 2; }
    void reset() override {}
  } other;
  const std::string e = config_error([&] { other.train_validation_split(0.2); });
  EXPECT_NE(e.find("validation_split"), std::string::npos) << e;
  EXPECT_NE(e.find("in-memory"), std::string::npos) << e;
}

TEST(Arrays, LoadArrayReadsCsvNpyAndNpz) {
  torchfit::testing::TempDir dir("load_array");
  const auto ref = torchfit::testing::run_python({"numpy"}, R"(
import numpy as np
d = data["dir"]
x = np.array([[1.5, -2.0, 3.25], [4.0, 5.5, -6.0]], dtype="<f8")
np.save(d + "/x.npy", x)
np.savez(d + "/xy.npz", x=x, y=np.array([1, 0]))
np.savez(d + "/one.npz", only=x)
np.savetxt(d + "/x.txt", x)                      # whitespace-separated, "%.18e"
np.savetxt(d + "/x.csv", x, delimiter=",", header="a,b,c", comments="")
np.savetxt(d + "/y.csv", np.array([7.0, 8.0]), delimiter=",")
out = x.tolist()
)",
                                                 {{"dir", dir.path.string()}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const at::Tensor want = at::tensor(ref.out.get<std::vector<std::vector<double>>>()[0], at::kDouble);
  const at::Tensor x_npy = data::load_array(dir.file("x.npy"));
  EXPECT_EQ(x_npy.scalar_type(), at::kDouble);
  EXPECT_TRUE(x_npy[0].equal(want));
  EXPECT_TRUE(data::load_array(dir.file("x.csv")).equal(x_npy.to(at::kFloat)));  // header row skipped
  EXPECT_TRUE(data::load_array(dir.file("x.txt"), ' ').equal(x_npy.to(at::kFloat)));
  const at::Tensor y = data::load_array(dir.file("y.csv"));
  EXPECT_EQ(y.sizes().vec(), std::vector<int64_t>{2});  // one column → (N)
  if (io::npz_available()) {
    EXPECT_TRUE(data::load_array(dir.file("xy.npz") + ":y").equal(at::tensor({1, 0}, at::kLong)));
    EXPECT_TRUE(data::load_array(dir.file("one.npz")).equal(x_npy));
    EXPECT_NE(io_error([&] { data::load_array(dir.file("xy.npz")); }).find("holds 2 arrays (x, y)"), std::string::npos);
    EXPECT_NE(io_error([&] { data::load_array(dir.file("xy.npz") + ":z"); }).find("has no array 'z'"),
              std::string::npos);
  }
  std::ofstream(dir.file("ragged.csv")) << "1,2\n3\n";
  const std::string ragged = io_error([&] { data::load_array(dir.file("ragged.csv")); });
  EXPECT_NE(ragged.find("ragged.csv' line 2: 1 cells"), std::string::npos) << ragged;
  std::ofstream(dir.file("word.csv")) << "1,2\n3,abc\n";
  const std::string word = io_error([&] { data::load_array(dir.file("word.csv")); });
  EXPECT_NE(word.find("line 2 column 2: 'abc' is not a number"), std::string::npos) << word;
  std::ofstream(dir.file("gz.csv"), std::ios::binary) << std::string("\x1f\x8b\x08\x00", 4);
  EXPECT_NE(io_error([&] { data::load_array(dir.file("gz.csv")); }).find("gzip-compressed"), std::string::npos);
  std::ofstream(dir.file("header_only.csv")) << "a,b\n";
  EXPECT_NE(io_error([&] { data::load_array(dir.file("header_only.csv")); }).find("no rows of numbers"),
            std::string::npos);
}

TEST(Arrays, ReadsScikitLearnsDiabetesCsv) {
  torchfit::testing::TempDir dir("diabetes");
  const auto ref = torchfit::testing::run_python({"numpy", "sklearn.datasets", "gzip"}, R"(
import gzip, os, sklearn.datasets
base = os.path.join(os.path.dirname(sklearn.datasets.__file__), "data")
for name in ["diabetes_data_raw", "diabetes_target"]:
    open(data["dir"] + "/" + name + ".csv", "wb").write(gzip.open(base + "/" + name + ".csv.gz").read())
x, y = sklearn.datasets.load_diabetes(return_X_y=True, scaled=False)
out = {"shape": list(x.shape), "x_sum": float(x.sum()), "y": y[:5].tolist(), "row0": x[0].tolist()}
)",
                                                 {{"dir", dir.path.string()}});
  TORCHFIT_REQUIRE_PYTHON(ref);
  const at::Tensor x = data::load_array(dir.file("diabetes_data_raw.csv"), ' ');
  const at::Tensor y = data::load_array(dir.file("diabetes_target.csv"), ' ');
  EXPECT_EQ(x.sizes().vec(), ref.out["shape"].get<std::vector<int64_t>>());
  EXPECT_NEAR(x.to(at::kDouble).sum().item<double>(), ref.out["x_sum"].get<double>(), 1e-3);
  const auto row0 = ref.out["row0"].get<std::vector<double>>();
  for (size_t c = 0; c < row0.size(); ++c) EXPECT_FLOAT_EQ(x[0][c].item<float>(), static_cast<float>(row0[c]));
  const auto y5 = ref.out["y"].get<std::vector<double>>();
  for (size_t i = 0; i < y5.size(); ++i) EXPECT_FLOAT_EQ(y[i].item<float>(), static_cast<float>(y5[i]));
}

}  // namespace torchfit::arrays_test
