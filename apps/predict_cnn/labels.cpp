#include "labels.h"

#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include <torchfit/error.h>
#include <torchfit/io/csv.h>

namespace predict_cnn {
namespace {

struct LabelColumns {
  int file = -1, name = -1, index = -1;
};

// "labels file 'x.csv' line N: <what>" as an IoError.
[[noreturn]] void bad_label(const std::filesystem::path& path, int64_t line, const std::string& what) {
  throw torchfit::IoError("labels file '" + path.string() + "' line " + std::to_string(line) + ": " + what);
}

// 'name' with control characters escaped (a name may hold a line break).
std::string quoted_name(const std::string& name) {
  std::string out = "'";
  for (const unsigned char c : name) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

LabelColumns find_label_columns(const torchfit::io::CsvRow& header, const std::filesystem::path& path) {
  LabelColumns c;
  std::string found;
  for (int i = 0; i < static_cast<int>(header.cells.size()); ++i) {
    const std::string h = torchfit::io::csv_header_name(header.cells[static_cast<size_t>(i)]);
    found += (found.empty() ? "'" : ", '") + h + "'";
    if (h == "filename" || h == "file") c.file = i;
    if (h == "class_name" || h == "class") c.name = i;
    if (h == "class_index") c.index = i;
  }
  if (c.file < 0 || (c.name < 0 && c.index < 0)) {
    bad_label(
        path, header.line,
        "needs a header with filename (or file) and class_name (or class, or class_index) columns, found " + found);
  }
  return c;
}

std::string label_class(const torchfit::io::CsvRow& row, const LabelColumns& c, const std::vector<std::string>& names,
                        const std::filesystem::path& path) {
  std::string cls = c.name >= 0 ? row.cells[static_cast<size_t>(c.name)] : "";
  if (cls.empty() && c.index >= 0) {
    const std::string& text = row.cells[static_cast<size_t>(c.index)];
    size_t used = 0;
    long long k = -1;
    try {
      k = std::stoll(text, &used);
    } catch (const std::exception&) {
    }
    if (k < 0 || used != text.size()) bad_label(path, row.line, "class_index '" + text + "' is not a class index");
    if (!names.empty() && static_cast<size_t>(k) >= names.size()) {
      bad_label(path, row.line,
                "class_index " + text + " is not a class of the model (0.." + std::to_string(names.size() - 1) + ")");
    }
    cls = names.empty() ? text : names[static_cast<size_t>(k)];
  }
  if (cls.empty()) bad_label(path, row.line, "no class");
  if (!names.empty() && std::find(names.begin(), names.end(), cls) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    bad_label(path, row.line, "class '" + cls + "' is not a class of the model (" + known + ")");
  }
  return cls;
}

// Labels whose file got no prediction (not in the folder, or not decodable): counted and named (the first
// ten, quoted as C strings so that blanks and line breaks show).
void warn_unused_labels(const std::map<std::string, std::string>& truth, const std::set<std::string>& used,
                        const std::filesystem::path& labels) {
  std::string names;
  size_t missing = 0;
  for (const auto& [file, cls] : truth) {
    if (used.count(file)) continue;
    if (++missing <= 10) names += (names.empty() ? "" : ", ") + quoted_name(file);
  }
  if (missing == 0) return;
  torchfit::logger().warn(
      "labels file '{}': {} label(s) name files with no prediction (not in the folder, or not "
      "decodable), not counted in the accuracy: {}{}",
      labels.string(), missing, names, missing > 10 ? ", …" : "");
}

}  // namespace

std::map<std::string, std::string> read_labels(const std::filesystem::path& path,
                                               const std::vector<std::string>& names) {
  const auto rows = torchfit::io::read_csv(path.string(), ',', "labels file");
  if (rows.empty()) bad_label(path, 1, "the file is empty (needs a header with filename and class_name columns)");
  const LabelColumns c = find_label_columns(rows.front(), path);
  const size_t need = static_cast<size_t>(std::max(c.file, std::max(c.name, c.index))) + 1;
  std::map<std::string, std::string> truth;
  std::map<std::string, int64_t> first_line;
  for (size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.cells.size() < need) {
      bad_label(path, row.line,
                std::to_string(row.cells.size()) + " cell(s), the header's columns need " + std::to_string(need));
    }
    const std::string& file = row.cells[static_cast<size_t>(c.file)];
    if (file.empty()) bad_label(path, row.line, "empty file name");
    if (!first_line.emplace(file, row.line).second) {
      bad_label(path, row.line,
                "'" + file + "' is labelled twice (also line " + std::to_string(first_line[file]) + ")");
    }
    truth[file] = label_class(row, c, names, path);
  }
  return truth;
}

void report_accuracy(const std::map<std::string, std::string>& truth,
                     const std::vector<std::pair<std::string, std::string>>& predicted,
                     const std::filesystem::path& labels) {
  int64_t correct = 0, labelled = 0;
  std::set<std::string> used;
  for (const auto& [file, cls] : predicted) {
    auto t = truth.find(file);
    if (t == truth.end()) continue;
    ++labelled;
    used.insert(file);
    correct += t->second == cls;
  }
  warn_unused_labels(truth, used, labels);
  if (labelled == 0) {
    torchfit::logger().warn("labels file '{}' labels none of the {} predicted images: no accuracy", labels.string(),
                            predicted.size());
    return;
  }
  std::printf("Accuracy on %lld labelled images (%s): %.4f\n", static_cast<long long>(labelled),
              labels.string().c_str(), static_cast<double>(correct) / static_cast<double>(labelled));
}

}  // namespace predict_cnn
