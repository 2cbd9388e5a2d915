// Label encoding: class indices → Keras's class_mode tensors.
#include <torchfit/data/label_encoder.h>
#include <torchfit/error.h>

namespace torchfit::data {

namespace {

void check_labels(const std::vector<int64_t>& labels, int64_t num_classes) {
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] < 0 || labels[i] >= num_classes)
      throw IndexError("label " + std::to_string(labels[i]) + " of batch sample " + std::to_string(i) +
                       " is outside the class indices 0.." + std::to_string(num_classes - 1));
}

}  // namespace

ClassMode parse_class_mode(const std::string& name) {
  if (name == "categorical") return ClassMode::categorical;
  if (name == "sparse") return ClassMode::sparse;
  if (name == "binary") return ClassMode::binary;
  if (name == "input") return ClassMode::input;
  if (name == "none") return ClassMode::none;
  throw ConfigError("class_mode must be categorical, sparse, binary, input or none, got \"" + name + "\"");
}

std::string class_mode_name(ClassMode mode) {
  switch (mode) {
    case ClassMode::categorical:
      return "categorical";
    case ClassMode::sparse:
      return "sparse";
    case ClassMode::binary:
      return "binary";
    case ClassMode::input:
      return "input";
    case ClassMode::none:
      return "none";
  }
  return "none";
}

void check_class_count(ClassMode mode, int64_t num_classes, const std::string& source) {
  if (mode == ClassMode::binary && num_classes != 2)
    throw ConfigError("class_mode \"binary\" needs exactly 2 classes, " + source + " has " +
                      std::to_string(num_classes));
}

at::Tensor encode_labels(ClassMode mode, const std::vector<int64_t>& labels, int64_t num_classes, const at::Tensor& x,
                         bool pinned) {
  const auto m = static_cast<int64_t>(labels.size());
  const auto options = [pinned](at::ScalarType t) { return at::TensorOptions().dtype(t).pinned_memory(pinned); };
  if (mode == ClassMode::input) return x.clone();
  if (mode == ClassMode::none) return {};
  check_labels(labels, num_classes);
  if (mode == ClassMode::categorical) {
    at::Tensor y = at::zeros({m, num_classes}, options(at::kFloat));
    float* p = y.data_ptr<float>();
    for (int64_t i = 0; i < m; ++i) p[i * num_classes + labels[static_cast<size_t>(i)]] = 1.f;
    return y;
  }
  if (mode == ClassMode::sparse) {
    at::Tensor y = at::empty({m}, options(at::kLong));
    int64_t* p = y.data_ptr<int64_t>();
    for (int64_t i = 0; i < m; ++i) p[i] = labels[static_cast<size_t>(i)];
    return y;
  }
  at::Tensor y = at::empty({m, 1}, options(at::kFloat));  // binary
  float* p = y.data_ptr<float>();
  for (int64_t i = 0; i < m; ++i) p[i] = static_cast<float>(labels[static_cast<size_t>(i)]);
  return y;
}

}  // namespace torchfit::data
