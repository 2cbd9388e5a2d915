#include "labels.h"

#include <torchfit/runtime/logging.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/csv.h>
#include <torchfit/training/classification_report.h>

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

// One data row's cells: the file and the class cells ("" where the header has no such column).
struct LabelRow {
  int64_t line = 0;
  std::string file, name, index;
};

// A decimal index 0..count−1 spelt by `text` (digits only), else −1; −2 when it is digits beyond count.
int64_t spelt_index(const std::string& text, int64_t count) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos) return -1;
  const long long k = std::stoll(text);
  return k < count ? k : -2;
}

// The model's index named by a row's class_index cell.
int64_t class_index_cell(const LabelRow& row, const ModelClasses& classes, const std::filesystem::path& path) {
  const int64_t k = spelt_index(row.index, classes.count);
  if (k == -1) bad_label(path, row.line, "class_index '" + row.index + "' is not a class index");
  if (k == -2) {
    bad_label(
        path, row.line,
        "class_index " + row.index + " is not a class of the model (0.." + std::to_string(classes.count - 1) + ")");
  }
  return k;
}

// The model's index of a row's class, matched by what the cell is (see read_labels); −1 when the row's
// class name cannot match the model's classes (reported over the whole file by unknown_class).
int64_t row_class(const LabelRow& row, const ModelClasses& classes, const std::filesystem::path& path) {
  if (classes.named() && !row.name.empty()) {
    const auto it = std::find(classes.names.begin(), classes.names.end(), row.name);
    return it == classes.names.end() ? -1 : static_cast<int64_t>(it - classes.names.begin());
  }
  if (!row.index.empty()) return class_index_cell(row, classes, path);
  if (row.name.empty()) bad_label(path, row.line, "no class");
  const int64_t k = spelt_index(row.name, classes.count);  // a model without names: "0", "1", … only
  return k >= 0 ? k : -1;
}

// The first row whose class cannot match the model's classes: an error naming the model's classes and
// the file's (the distinct class names of the file, sorted; the first ten).
[[noreturn]] void unknown_class(const LabelRow& row, const std::vector<LabelRow>& rows, const ModelClasses& classes,
                                const std::filesystem::path& path) {
  std::set<std::string> seen;
  for (const auto& r : rows) {
    if (!r.name.empty()) seen.insert(r.name);
  }
  std::string file_classes;
  size_t listed = 0;
  for (const auto& n : seen) {
    if (listed++ == 10) {
      file_classes += ", …";
      break;
    }
    file_classes += (file_classes.empty() ? "" : ", ") + quoted_name(n);
  }
  bad_label(path, row.line,
            "class " + quoted_name(row.name) + " is not a class of the model (" + classes.describe() + ")" +
                (classes.named() ? "" : ": a model without class names needs a class_index column") +
                "; the file's classes: " + file_classes);
}

// Labels whose file got no prediction (not in the folder, or not decodable): counted and named (the first
// ten, quoted as C strings so that blanks and line breaks show).
void warn_unused_labels(const std::map<std::string, int64_t>& truth, const std::set<std::string>& used,
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

std::string ModelClasses::label(int64_t k) const {
  const bool has_name = k >= 0 && k < static_cast<int64_t>(names.size()) && !names[static_cast<size_t>(k)].empty();
  return has_name ? names[static_cast<size_t>(k)] : std::to_string(k);
}

std::string ModelClasses::describe() const {
  if (!named()) return "indices 0.." + std::to_string(count - 1) + ", the model has no class names";
  std::string known;
  for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
  return known;
}

std::map<std::string, int64_t> read_labels(const std::filesystem::path& path, const ModelClasses& classes) {
  const auto csv = torchfit::io::read_csv(path.string(), ',', "labels file");
  if (csv.empty()) bad_label(path, 1, "the file is empty (needs a header with filename and class_name columns)");
  const LabelColumns c = find_label_columns(csv.front(), path);
  if (!classes.named() && c.index >= 0) {
    torchfit::logger().warn(
        "labels file '{}': the model names no classes (a Keras file): its outputs are taken in the order of the "
        "class_index column; a model trained on image folders has them in the folders' sorted order",
        path.string());
  }
  const size_t need = static_cast<size_t>(std::max(c.file, std::max(c.name, c.index))) + 1;
  auto cell = [](const torchfit::io::CsvRow& row, int column) {
    return column < 0 ? std::string() : row.cells[static_cast<size_t>(column)];
  };
  std::vector<LabelRow> rows;
  std::map<std::string, int64_t> first_line;
  for (size_t r = 1; r < csv.size(); ++r) {
    const auto& row = csv[r];
    if (row.cells.size() < need) {
      bad_label(path, row.line,
                std::to_string(row.cells.size()) + " cell(s), the header's columns need " + std::to_string(need));
    }
    rows.push_back({row.line, cell(row, c.file), cell(row, c.name), cell(row, c.index)});
    const std::string& file = rows.back().file;
    if (file.empty()) bad_label(path, row.line, "empty file name");
    if (!first_line.emplace(file, row.line).second) {
      bad_label(path, row.line,
                "'" + file + "' is labelled twice (also line " + std::to_string(first_line[file]) + ")");
    }
  }
  std::map<std::string, int64_t> truth;
  for (const auto& row : rows) {
    const int64_t k = row_class(row, classes, path);
    if (k < 0) unknown_class(row, rows, classes, path);
    truth[row.file] = k;
  }
  return truth;
}

void report_accuracy(const std::map<std::string, int64_t>& truth,
                     const std::vector<std::pair<std::string, int64_t>>& predicted,
                     const std::filesystem::path& labels) {
  int64_t correct = 0, labelled = 0;
  std::set<std::string> used;
  for (const auto& [file, k] : predicted) {
    auto t = truth.find(file);
    if (t == truth.end()) continue;
    ++labelled;
    used.insert(file);
    correct += t->second == k;
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

void write_report(const std::map<std::string, int64_t>& truth,
                  const std::vector<std::pair<std::string, int64_t>>& predicted, const ModelClasses& classes,
                  const std::filesystem::path& report_path) {
  std::vector<std::pair<int64_t, int64_t>> pairs;  // (true, predicted) class indices
  for (const auto& [file, k] : predicted) {
    const auto t = truth.find(file);
    if (t != truth.end()) pairs.emplace_back(t->second, k);
  }
  if (pairs.empty()) return;
  // The report's classes: every class of a named model; without names, the indices seen, ascending.
  std::set<int64_t> seen;
  for (const auto& [t, p] : pairs) seen.insert({t, p});
  if (classes.named()) {
    for (int64_t k = 0; k < classes.count; ++k) seen.insert(k);
  }
  std::map<int64_t, int64_t> position;
  std::vector<std::string> names;
  for (const int64_t k : seen) {
    position[k] = static_cast<int64_t>(names.size());
    names.push_back(classes.label(k));
  }
  std::vector<int64_t> y_true, y_pred;
  for (const auto& [t, p] : pairs) {
    y_true.push_back(position.at(t));
    y_pred.push_back(position.at(p));
  }
  const auto report = torchfit::classification_report(y_true, y_pred, names);
  std::cout << torchfit::format_classification_report(report);
  torchfit::io::write_text_atomically(report_path.string(), report.dump(2) + "\n");
  std::cout << "Report: " << report_path.string() << "\n";
}

}  // namespace predict_cnn
