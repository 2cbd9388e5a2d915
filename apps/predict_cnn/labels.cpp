#include "labels.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include <torchfit/error.h>

namespace predict_cnn {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string x; std::getline(ss, x, ',');) out.push_back(x);
  return out;
}

struct Columns {
  int file = -1, name = -1, index = -1;
};

Columns find_columns(const std::vector<std::string>& header, const std::filesystem::path& path) {
  Columns c;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (header[i] == "filename" || header[i] == "file") c.file = i;
    if (header[i] == "class_name" || header[i] == "class") c.name = i;
    if (header[i] == "class_index") c.index = i;
  }
  if (c.file < 0 || (c.name < 0 && c.index < 0)) {
    throw torchfit::IoError("labels file '" + path.string() +
                            "' needs a header with filename and class_name (or class_index) columns");
  }
  return c;
}

std::string class_of(const std::vector<std::string>& cells, const Columns& c, const std::vector<std::string>& names,
                     const std::filesystem::path& path) {
  std::string cls = c.name >= 0 ? cells[static_cast<size_t>(c.name)] : "";
  if (!cls.empty() || c.index < 0) return cls;
  const std::string& text = cells[static_cast<size_t>(c.index)];
  size_t used = 0;
  long long k = -1;
  try {
    k = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (k < 0 || used != text.size()) {
    throw torchfit::IoError("labels file '" + path.string() + "': class_index '" + text +
                            "' is not a class index (0, 1, …)");
  }
  return static_cast<size_t>(k) < names.size() ? names[static_cast<size_t>(k)] : std::to_string(k);
}

}  // namespace

std::map<std::string, std::string> read_labels(const std::filesystem::path& path,
                                               const std::vector<std::string>& names) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  const Columns c = find_columns(split(line), path);
  const int need = std::max(c.file, std::max(c.name, c.index));
  std::map<std::string, std::string> truth;
  int64_t short_rows = 0;
  while (std::getline(f, line)) {
    const auto cells = split(line);
    if (static_cast<int>(cells.size()) <= need) {
      short_rows += !line.empty();
      continue;
    }
    truth[cells[static_cast<size_t>(c.file)]] = class_of(cells, c, names, path);
  }
  if (short_rows > 0) {
    spdlog::warn("labels file '{}': {} row(s) with fewer columns than the header were skipped", path.string(),
                 short_rows);
  }
  return truth;
}

void report_accuracy(const std::map<std::string, std::string>& truth,
                     const std::vector<std::pair<std::string, std::string>>& predicted,
                     const std::map<std::string, int64_t>& class_indices, const std::filesystem::path& labels) {
  int64_t correct = 0, labelled = 0, unknown_class = 0;
  std::string unknown_example;
  for (const auto& [file, cls] : predicted) {
    auto t = truth.find(file);
    if (t == truth.end()) continue;
    ++labelled;
    correct += t->second == cls;
    if (!class_indices.empty() && !class_indices.count(t->second)) {
      if (unknown_class++ == 0) unknown_example = t->second;
    }
  }
  if (unknown_class > 0) {
    std::string known;
    for (const auto& [n, i] : class_indices) known += (known.empty() ? "" : ", ") + n;
    spdlog::warn(
        "{} of {} labelled images have a class the model was not trained on (e.g. '{}'; model classes: {}): "
        "the accuracy below counts them as wrong",
        unknown_class, labelled, unknown_example, known);
  }
  if (labelled > 0) {
    std::printf("Accuracy on %lld labelled images (%s): %.4f\n", static_cast<long long>(labelled),
                labels.string().c_str(), static_cast<double>(correct) / static_cast<double>(labelled));
  }
}

}  // namespace predict_cnn
