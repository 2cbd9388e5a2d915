#include <torchfit/data/arrays.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <vector>

#include <ATen/ATen.h>

#include <torchfit/error.h>
#include <torchfit/io/csv.h>
#include <torchfit/io/npy.h>

namespace torchfit::data {
namespace {

void check_length(const at::Tensor& t, const char* name, int64_t n, const std::string& who) {
  if (!t.defined()) return;
  if (t.dim() == 0) throw ConfigError(who + ": " + name + " is a scalar; it needs one entry per sample (axis 0)");
  if (t.size(0) != n) {
    throw ConfigError(who + ": x has " + std::to_string(n) + " samples but " + name + " has " +
                      std::to_string(t.size(0)) +
                      " (Keras: data cardinality is ambiguous; every array needs "
                      "the same number of samples along axis 0)");
  }
}

at::Tensor floatx(const at::Tensor& t) {
  if (!t.defined()) return t;
  at::Tensor c = t.device().is_cpu() ? t : t.cpu();
  return at::isFloatingType(c.scalar_type()) && c.scalar_type() != at::kFloat ? c.to(at::kFloat) : c;
}

std::vector<at::Tensor> first_and_more(const at::Tensor& first, const std::vector<at::Tensor>& more) {
  if (!first.defined()) return {};
  std::vector<at::Tensor> all{first};
  all.insert(all.end(), more.begin(), more.end());
  return all;
}

// Every further input / target through f, the undefined ones refused naming them ("x[1]").
std::vector<at::Tensor> each_more(const std::vector<at::Tensor>& more, const char* name, int64_t n,
                                  const std::string& who) {
  std::vector<at::Tensor> out;
  for (size_t i = 0; i < more.size(); ++i) {
    const std::string label = std::string(name) + "[" + std::to_string(i + 1) + "]";
    if (!more[i].defined()) throw ConfigError(who + ": " + label + " is not given (an undefined tensor)");
    check_length(more[i], label.c_str(), n, who);
    out.push_back(floatx(more[i]));
  }
  return out;
}

}  // namespace

Arrays::Arrays(std::vector<at::Tensor> xs, std::vector<at::Tensor> ys, at::Tensor sample_weight_)
    : sample_weight(std::move(sample_weight_)) {
  if (!xs.empty()) {
    x = xs[0];
    more_x.assign(xs.begin() + 1, xs.end());
  }
  if (!ys.empty()) {
    y = ys[0];
    more_y.assign(ys.begin() + 1, ys.end());
  }
}

std::vector<at::Tensor> Arrays::inputs() const { return first_and_more(x, more_x); }
std::vector<at::Tensor> Arrays::targets() const { return first_and_more(y, more_y); }

namespace {

std::vector<at::Tensor> in_order(const std::map<std::string, at::Tensor>& given, const std::vector<std::string>& names,
                                 const char* what) {
  std::string listed;
  for (const auto& n : names) listed += (listed.empty() ? "'" : ", '") + n + "'";
  for (const auto& [name, t] : given) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      throw ConfigError("fit: an array is given for the " + std::string(what) + " '" + name +
                        "', which the model does not have; its " + what + "s are " + listed);
    }
  }
  std::vector<at::Tensor> out;
  for (const auto& n : names) {
    const auto it = given.find(n);
    if (it == given.end()) {
      throw ConfigError("fit: no array is given for the " + std::string(what) + " '" + n + "' (the model's " + what +
                        "s are " + listed + ")");
    }
    out.push_back(it->second);
  }
  return out;
}

}  // namespace

Arrays arrays_by_name(const std::map<std::string, at::Tensor>& x, const std::map<std::string, at::Tensor>& y,
                      const std::vector<std::string>& input_names, const std::vector<std::string>& output_names,
                      at::Tensor sample_weight) {
  return Arrays(in_order(x, input_names, "input"),
                y.empty() ? std::vector<at::Tensor>{} : in_order(y, output_names, "output"), std::move(sample_weight));
}

Arrays standardize_arrays(const Arrays& arrays, const std::string& who, bool need_y) {
  const int64_t n = arrays.samples();
  if (n == 0) throw ConfigError(who + ": x has no samples (it must be a tensor with N > 0 along axis 0)");
  if (need_y && !arrays.y.defined()) throw ConfigError(who + ": y (the targets) is not given");
  if (!arrays.y.defined() && !arrays.more_y.empty()) throw ConfigError(who + ": y[0] (the first target) is not given");
  check_length(arrays.y, "y", n, who);
  check_length(arrays.sample_weight, "sample_weight", n, who);
  Arrays out(floatx(arrays.x), floatx(arrays.y), floatx(arrays.sample_weight));
  out.more_x = each_more(arrays.more_x, "x", n, who);
  out.more_y = each_more(arrays.more_y, "y", n, who);
  const at::Tensor& w = arrays.sample_weight;
  if (w.defined()) {
    if (!at::isFloatingType(w.scalar_type())) {
      throw ConfigError(who + ": sample_weight must be floating-point, got " +
                        std::string(c10::toString(w.scalar_type())));
    }
    if (!at::isfinite(w).all().item<bool>()) throw ConfigError(who + ": sample_weight holds NaN or inf");
  }
  return out;
}

std::pair<Arrays, Arrays> train_validation_split(const Arrays& arrays, double validation_split) {
  if (!(validation_split > 0.0 && validation_split < 1.0)) {
    throw ConfigError(
        "validation_split must be a number in (0, 1) (the fraction of the samples to validate "
        "on), got " +
        std::to_string(validation_split));
  }
  const int64_t n = arrays.samples();
  const auto split_at = static_cast<int64_t>(std::floor(static_cast<double>(n) * (1.0 - validation_split)));
  if (split_at == 0 || split_at == n) {
    throw ConfigError("x has " + std::to_string(n) +
                      " samples, which is not sufficient to split it into a validation and training set as "
                      "specified by validation_split=" +
                      std::to_string(validation_split) +
                      " (Keras's rule: the first floor(N * (1 - validation_split)) samples train)");
  }
  auto part = [](const at::Tensor& t, int64_t a, int64_t b) { return t.defined() ? t.slice(0, a, b) : t; };
  auto parts = [&](const std::vector<at::Tensor>& ts, int64_t a, int64_t b) {
    std::vector<at::Tensor> out;
    for (const auto& t : ts) out.push_back(part(t, a, b));
    return out;
  };
  Arrays train(part(arrays.x, 0, split_at), part(arrays.y, 0, split_at), part(arrays.sample_weight, 0, split_at));
  Arrays val(part(arrays.x, split_at, n), part(arrays.y, split_at, n), part(arrays.sample_weight, split_at, n));
  train.more_x = parts(arrays.more_x, 0, split_at);
  train.more_y = parts(arrays.more_y, 0, split_at);
  val.more_x = parts(arrays.more_x, split_at, n);
  val.more_y = parts(arrays.more_y, split_at, n);
  return {train, val};
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

bool parse_number(const std::string& cell, float& out) {
  const char* begin = cell.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (end == begin) return false;
  while (*end == ' ' || *end == '\t') ++end;
  if (*end != '\0') return false;
  out = static_cast<float>(v);
  return true;
}

void refuse_gzip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[2] = {0, 0};
  if (in.read(magic, 2) && magic[0] == '\x1f' && magic[1] == '\x8b') {
    throw IoError("'" + path + "' is gzip-compressed; decompress it first (gunzip -k '" + path + "')");
  }
}

at::Tensor csv_array(const std::string& path, char separator) {
  refuse_gzip(path);
  std::vector<io::CsvRow> rows = io::read_csv(path, separator, "array file");
  if (separator == ' ') {  // whitespace-separated text: runs of blanks separate, as numpy.loadtxt reads it
    for (auto& r : rows) {
      std::vector<std::string> cells;
      for (auto& c : r.cells)
        if (!c.empty()) cells.push_back(std::move(c));
      r.cells = std::move(cells);
    }
  }
  size_t first = 0;
  float v = 0;
  if (!rows.empty()) {
    bool header = true;
    for (const auto& c : rows[0].cells) header = header && !parse_number(c, v);
    if (header) first = 1;
  }
  if (rows.size() <= first) throw IoError("array file '" + path + "' has no rows of numbers");
  const size_t cols = rows[first].cells.size();
  std::vector<float> values;
  values.reserve((rows.size() - first) * cols);
  for (size_t r = first; r < rows.size(); ++r) {
    const io::CsvRow& row = rows[r];
    const std::string where = "array file '" + path + "' line " + std::to_string(row.line);
    if (row.cells.size() != cols) {
      throw IoError(where + ": " + std::to_string(row.cells.size()) + " cells, the first row of numbers has " +
                    std::to_string(cols));
    }
    for (size_t c = 0; c < cols; ++c) {
      if (!parse_number(row.cells[c], v)) {
        throw IoError(where + " column " + std::to_string(c + 1) + ": '" + row.cells[c] + "' is not a number");
      }
      values.push_back(v);
    }
  }
  const auto n = static_cast<int64_t>(rows.size() - first);
  at::Tensor t = at::tensor(values, at::kFloat).reshape({n, static_cast<int64_t>(cols)});
  return cols == 1 ? t.reshape({n}) : t;
}

at::Tensor npz_member(const std::string& path, const std::string& key) {
  auto arrays = io::read_npz(path);
  std::string names;
  for (const auto& kv : arrays) names += (names.empty() ? "" : ", ") + kv.first;
  if (key.empty()) {
    if (arrays.size() == 1) return arrays.begin()->second;
    throw IoError("'" + path + "' holds " + std::to_string(arrays.size()) + " arrays (" + names + "); name one as '" +
                  path + ":NAME'");
  }
  const auto it = arrays.find(key);
  if (it == arrays.end()) throw IoError("'" + path + "' has no array '" + key + "' (it holds: " + names + ")");
  return it->second;
}

}  // namespace

at::Tensor load_array(const std::string& spec, char separator) {
  const size_t colon = spec.rfind(':');
  if (colon != std::string::npos && ends_with(spec.substr(0, colon), ".npz")) {
    return npz_member(spec.substr(0, colon), spec.substr(colon + 1));
  }
  if (ends_with(spec, ".npz")) return npz_member(spec, "");
  if (ends_with(spec, ".npy")) return io::read_npy(spec);
  return csv_array(spec, separator);
}

}  // namespace torchfit::data
