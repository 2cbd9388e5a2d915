// Keras's IoU metrics (keras/src/metrics/iou_metrics.py): a summed confusion matrix of class ids, the
// intersection over union of the target classes from it.
#include "training/keras_metric.h"

namespace torchfit::metric {
namespace {

// How an IoU metric reads class ids from a batch.
struct IouReading {
  int64_t classes = 2;
  std::vector<int64_t> target_ids;
  std::optional<int64_t> ignore_class;
  bool sparse_y_true = true, sparse_y_pred = true;
  std::optional<double> binary_threshold;  // BinaryIoU: ids are (p >= threshold) and the 0/1 targets
};

// _IoUBase.update_state and IoU.result: matrix[true][pred] over the ids inside [0, classes) (and ≠
// ignore_class); per target class tp / (row + column − tp + ε) where that is > 1e-9, their mean over those.
class IouMetric : public KerasMetric {
 public:
  IouMetric(std::string who, IouReading r) : who_(std::move(who)), r_(std::move(r)) {}
  size_t state_size() const override { return static_cast<size_t>(r_.classes * r_.classes); }
  void update(const Batch& b, double* s) const override {
    at::Tensor y, p;
    if (r_.binary_threshold) {
      y = b.dense_target().reshape({-1}).to(at::kLong);
      p = b.probabilities().ge(*r_.binary_threshold).reshape({-1}).to(at::kLong);
    } else {
      // Sparse ids are the values themselves (a one-hot target: its argmax); dense ones the argmax of the rows.
      y = r_.sparse_y_true ? b.target_ids() : b.target_rows().argmax(1);
      p = r_.sparse_y_pred ? b.probabilities().reshape({-1}).to(at::kLong) : b.probability_rows().argmax(1);
      if (!r_.sparse_y_pred && b.probability_rows().size(1) > r_.classes) {  // its argmax would fall outside
        throw ConfigError("metric " + who_ + ": num_classes is " + std::to_string(r_.classes) + " but the output has " +
                          std::to_string(b.probability_rows().size(1)) + " classes");
      }
    }
    if (y.numel() != p.numel()) {
      throw ConfigError("metric " + who_ + ": " + std::to_string(y.numel()) + " target ids but " +
                        std::to_string(p.numel()) + " predicted ids (sparse_y_true/sparse_y_pred must fit the data)");
    }
    const int64_t k = r_.classes;
    at::Tensor keep = y.ge(0) & y.lt(k) & p.ge(0) & p.lt(k);
    if (r_.ignore_class) keep = keep & y.ne(*r_.ignore_class);
    const at::Tensor cells = (y * k + p).masked_select(keep);
    // Keras: the sample weights, broadcast to the ids, weigh each id's cell.
    const at::Tensor w = b.weighted() ? b.weights_for(y.numel()).masked_select(keep) : at::Tensor();
    const at::Tensor m = at::bincount(cells, w, k * k).to(at::kDouble).cpu().contiguous();
    const double* v = m.data_ptr<double>();
    for (int64_t i = 0; i < k * k; ++i) s[i] += v[i];
  }
  std::vector<double> result(const double* s) const override {
    const int64_t k = r_.classes;
    double sum = 0, valid = 0;
    for (int64_t c : r_.target_ids) {
      double predicted = 0, actual = 0;
      for (int64_t i = 0; i < k; ++i) predicted += s[i * k + c], actual += s[c * k + i];
      const double tp = s[c * k + c], denominator = predicted + actual - tp;
      if (denominator > 1e-9) sum += tp / (denominator + 1e-7), valid += 1;
    }
    return {sum / (valid + 1e-7)};
  }

 private:
  std::string who_;
  IouReading r_;
};

}  // namespace

std::unique_ptr<KerasMetric> make_iou(const Options& o, const Context&) {
  const std::string& c = o.class_name();
  IouReading r;
  if (c == "BinaryIoU") {
    r.target_ids = o.integers("target_class_ids", {0, 1});
    r.binary_threshold = o.number("threshold", 0.5);
  } else {
    if (!o.has("num_classes")) throw o.error("needs its argument num_classes");
    r.classes = o.integer("num_classes", 2);
    if (r.classes < 1) throw o.error("num_classes must be >= 1, got " + std::to_string(r.classes));
    std::vector<int64_t> all(r.classes);
    for (int64_t i = 0; i < r.classes; ++i) all[i] = i;
    const bool mean = c == "MeanIoU" || c == "OneHotMeanIoU";
    if (!mean && !o.has("target_class_ids")) throw o.error("needs its argument target_class_ids");
    r.target_ids = mean ? all : o.integers("target_class_ids", {});
    r.ignore_class = o.optional_integer("ignore_class");
    const bool one_hot = c == "OneHotIoU" || c == "OneHotMeanIoU";
    r.sparse_y_true = one_hot ? false : o.boolean("sparse_y_true", true);
    r.sparse_y_pred = o.boolean("sparse_y_pred", !one_hot);
    if (o.has("axis") && o.config()["axis"] != -1) throw o.error("axis must be -1 (the last Keras axis)");
  }
  for (int64_t id : r.target_ids) {
    if (id < 0 || id >= r.classes) {
      throw o.error("target_class_ids must lie in [0, " + std::to_string(r.classes) + "), got " + std::to_string(id));
    }
  }
  return std::make_unique<IouMetric>(c, r);
}

}  // namespace torchfit::metric
