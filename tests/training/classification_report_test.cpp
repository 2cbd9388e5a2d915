// The classification report and confusion matrix against scikit-learn's, on the same labels.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include <torchfit/training/classification_report.h>

#include "support/python_reference.h"

using namespace torchfit;

namespace {

const char* kReportReference = R"(
import warnings
from sklearn.metrics import classification_report, confusion_matrix
# scikit-learn's default call on the class names (its labels: the sorted names present in either list).
y_true = [data["names"][i] for i in data["y_true"]]
y_pred = [data["names"][i] for i in data["y_pred"]]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # zero_division="warn": the value is 0, as here
    out = classification_report(y_true, y_pred, output_dict=True)
out["confusion_matrix"] = confusion_matrix(y_true, y_pred).tolist()
)";

void expect_report_json(const nlohmann::json& got, const nlohmann::json& want, const std::string& where) {
  if (want.is_number_float() || got.is_number_float()) {
    EXPECT_NEAR(got.get<double>(), want.get<double>(), 1e-12) << where;
  } else if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << where;
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << where << "/" << k;
      expect_report_json(got.at(k), v, where + "/" + k);
    }
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

}  // namespace

TEST(ClassificationReport, EqualsScikitLearnsOutputDictAndConfusionMatrix) {
  // Five classes; "frog" is never predicted and "toad" never occurs (zero divisions on both sides);
  // "wolf" is in neither list: no row, not in the macro average (scikit-learn's default labels).
  const std::vector<std::string> names = {"cat", "dog", "frog", "toad", "wolf"};
  std::mt19937 rng(3);
  std::vector<int64_t> y_true, y_pred;
  for (int i = 0; i < 97; ++i) {
    const int64_t t = static_cast<int64_t>(rng() % 3);
    int64_t p = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 4) : t;
    if (p == 2) p = 3;
    y_true.push_back(t);
    y_pred.push_back(p);
  }
  const auto report = classification_report(y_true, y_pred, names);
  const auto r = torchfit::testing::run_python({"sklearn"}, kReportReference,
                                               {{"y_true", y_true}, {"y_pred", y_pred}, {"names", names}});
  TORCHFIT_REQUIRE_PYTHON(r);
  expect_report_json(nlohmann::json::parse(report.dump()), r.out, "report");
  // Same keys, in scikit-learn's order, plus the labels.
  std::vector<std::string> keys;
  for (const auto& [k, v] : report.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"cat", "dog", "frog", "toad", "accuracy", "macro avg", "weighted avg",
                                            "confusion_matrix", "labels"}));
}

TEST(ClassificationReport, TextHasScikitLearnsLayout) {
  const auto report = classification_report({0, 0, 1, 1, 1}, {0, 1, 1, 1, 0}, {"a", "b"});
  const std::string text = format_classification_report(report);
  // scikit-learn 1.2 prints (digits=2):
  const std::string sklearn =
      "              precision    recall  f1-score   support\n"
      "\n"
      "           a       0.50      0.50      0.50         2\n"
      "           b       0.67      0.67      0.67         3\n"
      "\n"
      "    accuracy                           0.60         5\n"
      "   macro avg       0.58      0.58      0.58         5\n"
      "weighted avg       0.60      0.60      0.60         5\n";
  EXPECT_EQ(text.substr(0, sklearn.size()), sklearn);
  EXPECT_NE(text.find("Confusion matrix"), std::string::npos);
}

TEST(ClassificationReport, BadInputIsAnError) {
  EXPECT_THROW(classification_report({0, 1}, {0}, {"a", "b"}), std::invalid_argument);
  EXPECT_THROW(classification_report({}, {}, {"a", "b"}), std::invalid_argument);
  EXPECT_THROW(classification_report({0, 2}, {0, 1}, {"a", "b"}), std::invalid_argument);
}
