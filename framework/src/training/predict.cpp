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

std::vector<at::Tensor> forward_eval(ModelImpl& model, const std::vector<at::Tensor>& xs, c10::Device device) {
  at::NoGradGuard no_grad;
  move_to(model, device);
  const bool was_training = model.is_training();
  model.eval();
  std::vector<at::Tensor> on_device;
  for (const auto& x : xs) on_device.push_back(x.to(device));
  std::vector<at::Tensor> out = model.forward_multi(on_device);
  for (auto& o : out) o = o.to(at::kCPU);
  if (was_training) model.train();
  return out;
}

at::Tensor forward_eval(ModelImpl& model, const at::Tensor& x, c10::Device device) {
  if (model.inputs().size() != 1 || model.outputs().size() != 1) {
    throw ConfigError("predict: a batch tensor is for a model with one input and one output; this one has " +
                      std::to_string(model.inputs().size()) + " inputs and " + std::to_string(model.outputs().size()) +
                      " outputs (predict_outputs on a source with every input)");
  }
  return forward_eval(model, std::vector<at::Tensor>{x}, device)[0];
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

std::vector<at::Tensor> predict_outputs(ModelImpl& model, data::BatchIterator& source, c10::Device device,
                                        int64_t steps, std::vector<int64_t>* indices) {
  if (steps < 0) throw ConfigError("predict: steps must be >= 0, got " + std::to_string(steps));
  data::expect_batched(source, "predict");
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  std::vector<std::vector<at::Tensor>> outs(model.outputs().size());
  if (indices) indices->clear();
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    const std::vector<at::Tensor> out = forward_eval(model, batch.inputs(), device);
    for (size_t i = 0; i < out.size(); ++i) {
      outs[i].push_back(out[i]);
      std::string value;
      const int64_t row = first_non_finite_row(out[i], &value);
      if (row < 0) continue;
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
  std::vector<at::Tensor> result;
  for (const auto& o : outs) result.push_back(at::cat(o, 0));
  return result;
}

at::Tensor predict(ModelImpl& model, data::BatchIterator& source, c10::Device device, int64_t steps,
                   std::vector<int64_t>* indices) {
  if (model.outputs().size() != 1) {
    throw ConfigError("predict: the model has " + std::to_string(model.outputs().size()) +
                      " outputs; predict_outputs returns each of them");
  }
  return predict_outputs(model, source, device, steps, indices)[0];
}

bool scales_own_input(const ModelImpl& model) {
  for (const auto& layer : model.layers()) {
    if (layer->class_name() == "Rescaling" || layer->class_name() == "Normalization") return true;
    if (layer->count_params() > 0) return false;
  }
  return false;
}

}  // namespace torchfit
