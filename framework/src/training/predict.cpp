#include <torchfit/training/predict.h>

#include <ATen/ATen.h>

#include <cmath>

#include <torchfit/error.h>

namespace torchfit {
namespace {

void move_to(ModelImpl& model, c10::Device device) {
  const auto params = model.parameters();
  if (params.empty() || params.front().device() != device) model.to(device);
}

at::Tensor forward_eval(ModelImpl& model, const at::Tensor& x, c10::Device device) {
  at::NoGradGuard no_grad;
  move_to(model, device);
  const bool was_training = model.is_training();
  model.eval();
  at::Tensor out = model.forward(x.to(device)).to(at::kCPU);
  if (was_training) model.train();
  return out;
}

// Row of the first sample whose output holds NaN or ±inf (-1 when all are finite), and that value.
int64_t first_non_finite_row(const at::Tensor& out, std::string* value) {
  if (!out.is_floating_point() || out.numel() == 0) return -1;
  const at::Tensor rows = out.dim() == 0 ? out.reshape({1, 1}) : out.reshape({out.size(0), -1});
  const at::Tensor bad = at::logical_not(at::isfinite(rows));
  if (!bad.any().item<bool>()) return -1;
  const at::Tensor where = bad.nonzero();  // (row, column) pairs in row-major order
  const int64_t row = where[0][0].item<int64_t>();
  const double v = rows[row][where[0][1].item<int64_t>()].item<double>();
  *value = std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  return row;
}

[[noreturn]] void refuse_non_finite(const std::string& sample, const std::string& value) {
  throw NumericError("predict: the model's output for " + sample + " is not finite (" + value +
                     "); its weights may hold NaN or inf (diverged training or a damaged checkpoint)");
}

}  // namespace

at::Tensor predict(ModelImpl& model, const at::Tensor& x, c10::Device device) {
  at::Tensor out = forward_eval(model, x, device);
  std::string value;
  const int64_t row = first_non_finite_row(out, &value);
  if (row >= 0) refuse_non_finite("sample " + std::to_string(row) + " of the batch", value);
  return out;
}

at::Tensor predict(ModelImpl& model, data::BatchIterator& source, c10::Device device, int64_t steps,
                   std::vector<int64_t>* indices) {
  if (steps < 0) throw ConfigError("predict: steps must be >= 0, got " + std::to_string(steps));
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  std::vector<at::Tensor> outs;
  if (indices) indices->clear();
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    outs.push_back(forward_eval(model, batch.x, device));
    std::string value;
    const int64_t row = first_non_finite_row(outs.back(), &value);
    if (row >= 0) {
      const int64_t sample = row < static_cast<int64_t>(batch.indices.size()) ? batch.indices[row] : row;
      const auto files = source.filenames();
      const std::string name = "sample " + std::to_string(sample);
      refuse_non_finite(sample < static_cast<int64_t>(files.size())
                            ? "'" + files[static_cast<size_t>(sample)] + "' (" + name + ")"
                            : name,
                        value);
    }
    if (indices) indices->insert(indices->end(), batch.indices.begin(), batch.indices.end());
  }
  return at::cat(outs, 0);
}

}  // namespace torchfit
