#pragma once
// predict_cnn's labels file (the true class of each image) and the accuracy report.
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace predict_cnn {

/// Reads a CSV (RFC 4180 through torchfit::io::read_csv: CRLF or LF line ends, quoted cells, a UTF-8
/// byte-order mark) whose header names the columns: filename|file, and class_name|class or class_index
/// (an index is named through `names`, the checkpoint's classes in index order). Header names are matched
/// after dropping a byte-order mark and surrounding spaces. Returns file → class name.
/// `names` empty (a checkpoint without a class map) accepts any class; otherwise every class must be one
/// of `names`. Errors: torchfit::IoError naming the file and line ("labels file 'x.csv' line 4: …") for
/// malformed CSV, an empty file, a header without those columns, a row with fewer cells than the
/// header needs, an empty file name or class, a class_index that is not an index of `names`, a class
/// name the model does not know, or a file labelled twice.
std::map<std::string, std::string> read_labels(const std::filesystem::path& path,
                                               const std::vector<std::string>& names);

/// Prints `Accuracy on N labelled images (<labels>): 0.xxxx` over the predictions (file, class) that have
/// a label; a warning instead when no prediction has one. Labels whose file got no prediction (not in the
/// folder, or not decodable) are counted and named (the first ten) in a warning.
void report_accuracy(const std::map<std::string, std::string>& truth,
                     const std::vector<std::pair<std::string, std::string>>& predicted,
                     const std::filesystem::path& labels);

}  // namespace predict_cnn
