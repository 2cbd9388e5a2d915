#include <torchfit/training/predict.h>

#include <ATen/ATen.h>

#include <torchfit/error.h>

namespace torchfit {
namespace {

void move_to(SequentialImpl& model, c10::Device device) {
  const auto params = model.parameters();
  if (params.empty() || params.front().device() != device) model.to(device);
}

}  // namespace

at::Tensor predict(SequentialImpl& model, const at::Tensor& x, c10::Device device) {
  at::NoGradGuard no_grad;
  move_to(model, device);
  const bool was_training = model.is_training();
  model.eval();
  at::Tensor out = model.forward(x.to(device)).to(at::kCPU);
  if (was_training) model.train();
  return out;
}

at::Tensor predict(SequentialImpl& model, data::BatchIterator& source, c10::Device device, int64_t steps,
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
    outs.push_back(predict(model, batch.x, device));
    if (indices) indices->insert(indices->end(), batch.indices.begin(), batch.indices.end());
  }
  return at::cat(outs, 0);
}

}  // namespace torchfit
