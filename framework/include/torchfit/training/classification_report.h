#pragma once
/// @file classification_report.h
/// The classification report and confusion matrix of scikit-learn (sklearn.metrics).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace torchfit {

/// sklearn.metrics.classification_report(y_true, y_pred, output_dict=True) with the classes named by
/// `names`: scikit-learn's default labels, the classes present in y_true or y_pred, in index order (a
/// class absent from both has no row and does not enter the macro average), plus "confusion_matrix"
/// (sklearn.metrics.confusion_matrix(y_true, y_pred) over those classes: rows true class, columns
/// predicted class) and "labels" (their names, in index order).
/// Keys, in scikit-learn's order: each name → {"precision", "recall", "f1-score", "support"},
/// "accuracy", "macro avg", "weighted avg". precision = tp / (tp + fp), recall = tp / (tp + fn),
/// f1 = 2·p·r / (p + r), each 0 where its denominator is 0 (scikit-learn's zero_division="warn"); macro =
/// the mean over the present classes, weighted = weighted by support. `y_true`, `y_pred`: class indices in
/// [0, K), K = names.size(). Errors: std::invalid_argument for lengths that differ, an empty input or an
/// index outside [0, K).
nlohmann::ordered_json classification_report(const std::vector<int64_t>& y_true, const std::vector<int64_t>& y_pred,
                                             const std::vector<std::string>& names);

/// The report as scikit-learn prints it (classification_report(..., digits=2): right-aligned columns
/// precision, recall, f1-score, support; the accuracy row; macro and weighted averages), then the
/// confusion matrix with the class names as row and column headings.
std::string format_classification_report(const nlohmann::ordered_json& report);

}  // namespace torchfit
