#pragma once
// predict_cnn's labels file (the true class of each image) and the accuracy report.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace predict_cnn {

/// The model's classes: indices 0..count−1, named when the model has a class map (a train_cnn
/// checkpoint's class_indices); a Keras file has none, its classes are the indices themselves.
struct ModelClasses {
  std::vector<std::string> names;  ///< index order; empty when the model has no class names
  int64_t count = 0;               ///< the model's output size
  bool named() const { return !names.empty(); }
  /// names[k], or k as text when the model has no name for it (predictions.csv's spelling).
  std::string label(int64_t k) const;
  /// For messages: "cat, dog", or "indices 0..4 (the model has no class names)".
  std::string describe() const;
};

/// Reads a CSV (RFC 4180 through torchfit::io::read_csv: CRLF or LF line ends, quoted cells, a UTF-8
/// byte-order mark) whose header names the columns: filename|file, and class_name|class and/or
/// class_index (prepare_data's pred_labels.csv has both). Header names are matched after dropping a
/// byte-order mark and surrounding spaces. Returns file → the model's class index.
/// Labels are matched by what they are: a class name with the model's class names, a class_index with
/// the model's indices. A model with names takes the name cell (the class_index cell when the name cell is
/// empty or the file has no name column); a model without names (a Keras file) takes the class_index cell,
/// and reads a name cell only when it spells an index (folders named 0, 1, …).
/// Errors: torchfit::IoError naming the file and line ("labels file 'x.csv' line 4: …") for malformed CSV,
/// an empty file, a header without those columns, a row with fewer cells than the header needs, an empty
/// file name or class, a class_index that is not an index of the model, a class the model does not know
/// (naming the model's classes and the file's), or a file labelled twice; a name column only, none of
/// whose names can match a model without names, is an error naming both sets.
std::map<std::string, int64_t> read_labels(const std::filesystem::path& path, const ModelClasses& classes);

/// Prints `Accuracy on N labelled images (<labels>): 0.xxxx` over the predictions (file, class index) that have
/// a label; a warning instead when no prediction has one. Labels whose file got no prediction (not in the
/// folder, or not decodable) are counted and named (the first ten) in a warning.
void report_accuracy(const std::map<std::string, int64_t>& truth,
                     const std::vector<std::pair<std::string, int64_t>>& predicted,
                     const std::filesystem::path& labels);

/// scikit-learn's classification report and confusion matrix (torchfit::classification_report) over the
/// predictions (file, class index) that have a label: printed, and written atomically to `report_path`
/// (JSON: scikit-learn's output_dict layout plus "confusion_matrix" and "labels"). The classes are the
/// model's names in index order (the checkpoint's), or, without a class map, the indices seen, ascending
/// (as scikit-learn's labels=None). Nothing is written when no prediction has a label. Errors: IoError
/// naming `report_path`.
void write_report(const std::map<std::string, int64_t>& truth,
                  const std::vector<std::pair<std::string, int64_t>>& predicted, const ModelClasses& classes,
                  const std::filesystem::path& report_path);

}  // namespace predict_cnn
