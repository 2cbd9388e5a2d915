#include <torchfit/training/classification_report.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace torchfit {
namespace {

double report_ratio(double a, double b) { return b == 0 ? 0.0 : a / b; }

// scikit-learn's F-score: (1 + β²)·p·r / (β²·p + r) with a zero denominator replaced by 1.
double report_f1(double p, double r) {
  const double denominator = p + r;
  return 2.0 * p * r / (denominator == 0 ? 1.0 : denominator);
}

nlohmann::ordered_json report_row(double p, double r, double f, int64_t support) {
  return {{"precision", p}, {"recall", r}, {"f1-score", f}, {"support", support}};
}

std::vector<std::vector<int64_t>> confusion_counts(const std::vector<int64_t>& y_true,
                                                   const std::vector<int64_t>& y_pred, size_t k) {
  if (y_true.size() != y_pred.size()) {
    throw std::invalid_argument("classification_report: " + std::to_string(y_true.size()) + " true labels but " +
                                std::to_string(y_pred.size()) + " predictions");
  }
  if (y_true.empty()) throw std::invalid_argument("classification_report: no samples");
  std::vector<std::vector<int64_t>> m(k, std::vector<int64_t>(k, 0));
  for (size_t i = 0; i < y_true.size(); ++i) {
    for (const int64_t v : {y_true[i], y_pred[i]}) {
      if (v < 0 || v >= static_cast<int64_t>(k)) {
        throw std::invalid_argument("classification_report: class index " + std::to_string(v) + " outside [0, " +
                                    std::to_string(k) + ")");
      }
    }
    ++m[static_cast<size_t>(y_true[i])][static_cast<size_t>(y_pred[i])];
  }
  return m;
}

}  // namespace

nlohmann::ordered_json classification_report(const std::vector<int64_t>& y_true, const std::vector<int64_t>& y_pred,
                                             const std::vector<std::string>& names) {
  const size_t k = names.size();
  const auto all = confusion_counts(y_true, y_pred, k);
  std::vector<size_t> present;  // scikit-learn's default labels: unique_labels(y_true, y_pred), sorted
  for (size_t c = 0; c < k; ++c) {
    int64_t seen = 0;
    for (size_t j = 0; j < k; ++j) seen += all[c][j] + all[j][c];
    if (seen > 0) present.push_back(c);
  }
  const size_t n = present.size();
  std::vector<std::vector<int64_t>> m(n, std::vector<int64_t>(n, 0));
  std::vector<std::string> labels;
  for (size_t a = 0; a < n; ++a) {
    labels.push_back(names[present[a]]);
    for (size_t b = 0; b < n; ++b) m[a][b] = all[present[a]][present[b]];
  }
  nlohmann::ordered_json report;
  double macro[3] = {0, 0, 0}, weighted[3] = {0, 0, 0}, correct = 0;
  const auto total = static_cast<int64_t>(y_true.size());
  for (size_t c = 0; c < n; ++c) {
    int64_t support = 0, predicted = 0;
    for (size_t j = 0; j < n; ++j) {
      support += m[c][j];
      predicted += m[j][c];
    }
    const double tp = static_cast<double>(m[c][c]);
    correct += tp;
    const double p = report_ratio(tp, static_cast<double>(predicted)),
                 r = report_ratio(tp, static_cast<double>(support));
    const double values[3] = {p, r, report_f1(p, r)};
    for (int i = 0; i < 3; ++i) {
      macro[i] += values[i] / static_cast<double>(n);
      weighted[i] += values[i] * static_cast<double>(support) / static_cast<double>(total);
    }
    report[labels[c]] = report_row(p, r, values[2], support);
  }
  report["accuracy"] = correct / static_cast<double>(total);
  report["macro avg"] = report_row(macro[0], macro[1], macro[2], total);
  report["weighted avg"] = report_row(weighted[0], weighted[1], weighted[2], total);
  report["confusion_matrix"] = m;
  report["labels"] = labels;
  return report;
}

std::string format_classification_report(const nlohmann::ordered_json& report) {
  const auto& names = report.at("labels");
  int width = static_cast<int>(std::string("weighted avg").size());
  for (const auto& n : names) width = std::max(width, static_cast<int>(n.get<std::string>().size()));
  char line[512];
  std::string out;
  std::snprintf(line, sizeof line, "%*s  %9s %9s %9s %9s\n\n", width, "", "precision", "recall", "f1-score", "support");
  out += line;
  auto add_row = [&](const std::string& heading, const nlohmann::ordered_json& r) {
    std::snprintf(line, sizeof line, "%*s  %9.2f %9.2f %9.2f %9lld\n", width, heading.c_str(),
                  r.at("precision").get<double>(), r.at("recall").get<double>(), r.at("f1-score").get<double>(),
                  static_cast<long long>(r.at("support").get<int64_t>()));
    out += line;
  };
  for (const auto& n : names) add_row(n.get<std::string>(), report.at(n.get<std::string>()));
  std::snprintf(line, sizeof line, "\n%*s  %9s %9s %9.2f %9lld\n", width, "accuracy", "", "",
                report.at("accuracy").get<double>(),
                static_cast<long long>(report.at("macro avg").at("support").get<int64_t>()));
  out += line;
  add_row("macro avg", report.at("macro avg"));
  add_row("weighted avg", report.at("weighted avg"));
  out += "\nConfusion matrix (rows: true class, columns: predicted class)\n";
  int cell = 5;
  for (const auto& n : names) cell = std::max(cell, static_cast<int>(n.get<std::string>().size()));
  out += std::string(static_cast<size_t>(width + 2), ' ');
  for (const auto& n : names) {
    std::snprintf(line, sizeof line, " %*s", cell, n.get<std::string>().c_str());
    out += line;
  }
  out += "\n";
  const auto& m = report.at("confusion_matrix");
  for (size_t r = 0; r < names.size(); ++r) {
    std::snprintf(line, sizeof line, "%*s  ", width, names[r].get<std::string>().c_str());
    out += line;
    for (const auto& v : m[r]) {
      std::snprintf(line, sizeof line, " %*lld", cell, static_cast<long long>(v.get<int64_t>()));
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace torchfit
