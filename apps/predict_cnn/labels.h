#pragma once
// predict_cnn's labels file (the true class of each image) and the accuracy report.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace predict_cnn {

/// Reads a CSV whose header names the columns: filename|file, and class_name|class or class_index
/// (an index is named through `names`, the checkpoint's classes in index order). Returns file → class.
/// Rows with too few cells are skipped. Errors: torchfit::IoError naming the file for a header without
/// those columns or a class_index that is not a number.
std::map<std::string, std::string> read_labels(const std::filesystem::path& path,
                                               const std::vector<std::string>& names);

/// Prints `Accuracy on N labelled images (<labels>): 0.xxxx` over the predictions (file, class) that have
/// a label, after a warning when labels name classes the model was not trained on (`class_indices`).
void report_accuracy(const std::map<std::string, std::string>& truth,
                     const std::vector<std::pair<std::string, std::string>>& predicted,
                     const std::map<std::string, int64_t>& class_indices, const std::filesystem::path& labels);

}  // namespace predict_cnn
