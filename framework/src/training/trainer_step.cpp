// Trainer's steps: Keras 3's train_step / test_step (the compiled ones, the override points of
// "customizing what happens in fit()") and the helpers a custom step uses (call_model, compiled_loss,
// minimize, update_metrics).
#include <torchfit/training/trainer.h>

#include <ATen/record_function.h>

#include <torchfit/error.h>
#include <torchfit/training/data_parallel.h>

#include "training/device_prefetcher.h"

namespace torchfit {

void Trainer::apply_gradients() {
  if (!features_->before_update()) return;  // accumulating gradients
  bool applied = true;
  if (loss_scaler_) {
    applied = loss_scaler_->step();  // skips the step when a gradient is not finite
  } else {
    optimizer_->step();
  }
  if (applied) features_->after_update();
}

// Keras 3: class_weight becomes the sample weights (data_adapter_utils.class_weight_to_sample_weights).
// The output's Keras mask (Embedding mask_zero, Masking) weighs the loss as Keras 3's apply_mask.
at::Tensor Trainer::training_loss(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys,
                                  const at::Tensor& sample_weight, std::vector<double>* state) const {
  const std::vector<at::Tensor>& masks = model_->output_masks();
  if (class_weight_.defined() && sample_weight.defined()) {
    throw ConfigError(
        "fit: class_weight and sample_weight cannot be given together (Keras 3: \"You cannot "
        "`class_weight` and `sample_weight` at the same time\"); fold the class weights into the "
        "sample weights");
  }
  return outputs_->total_loss(outs, ys, sample_weight, masks, class_weight_, state);
}

std::vector<at::Tensor> Trainer::model_outputs(const std::vector<at::Tensor>& xs) {
  return model_->forward_multi(xs, outputs_->logits());
}

double Trainer::train_step(const at::Tensor& x, const at::Tensor& y, std::vector<double>* metric_sums) {
  return train_step(x, y, at::Tensor(), metric_sums);
}

double Trainer::train_step(const at::Tensor& x, const at::Tensor& y, const at::Tensor& sample_weight,
                           std::vector<double>* metric_sums) {
  detail::DeviceBatch batch;
  batch.x = x;
  batch.y = y;
  batch.sample_weight = sample_weight;
  batch.size = x.size(0);
  return compute_step(batch, metric_sums, 1.0).at("loss");
}

void Trainer::reset_gradients() {
  if (data_parallel_) {
    data_parallel_->zero_grad();  // the gradients are views into its buffer: zeroed, never reset
  } else {
    // Gradients set to none rather than zero-filled: backward writes fresh gradient tensors.
    for (auto& p : model_->parameters()) p.mutable_grad().reset();
  }
}

double Trainer::step_loss(const Logs& values, const char* step) const {
  const auto it = values.find("loss");
  if (it != values.end()) return it->second;
  std::string names;
  for (const auto& [k, v] : values) names += (names.empty() ? "" : ", ") + k;
  throw ConfigError(std::string(step) + " must return \"loss\" (the value fit() reports first); it returned: " +
                    (names.empty() ? "nothing" : names));
}

// One step (train_step, the default or an override); `loss_scale` multiplies the loss before backward
// (data-parallel: this shard's share of the global batch, so that the summed gradients are the global
// batch's mean). An empty shard (the last, partial batch of a pass split over more ranks than it has
// samples) only takes part in the allreduce.
Logs Trainer::compute_step(const detail::DeviceBatch& batch, std::vector<double>* metric_sums, double loss_scale) {
  if (batch.x.size(0) == 0) {
    reset_gradients();
    last_allreduce_ms_ = data_parallel_ ? data_parallel_->finish_gradients() : 0.0;
    apply_gradients();
    return {{"loss", 0.0}};
  }
  step_sums_ = metric_sums;
  step_share_ = loss_scale;
  struct Done {  // however the step ends
    Trainer& t;
    ~Done() {
      t.step_sums_ = nullptr;
      t.step_share_ = 1.0;
    }
  } done{*this};
  Logs values = train_step(batch.as_batch());
  step_loss(values, "train_step");
  return values;
}

// The compiled step: Keras 3's default train_step (forward, compute_loss, the optimizer's update, metrics).
Logs Trainer::train_step(const data::Batch& batch) {
  std::vector<at::Tensor> outs;
  at::Tensor loss;
  {
    RECORD_USER_SCOPE("torchfit::forward");  // named scopes for LibTorch's profiler (bench_step --profile)
    outs = call_model(batch);
    loss = compiled_loss(batch, outs);
  }
  minimize(loss);
  update_metrics(batch, outs);
  return {{"loss", loss.item<double>() + 0.0}};  // + 0.0 turns a loss of -0 into 0, as Keras reports it
}

Logs Trainer::test_step(const data::Batch& batch) {
  const std::vector<at::Tensor> outs = call_model(batch);
  update_metrics(batch, outs);
  return {{"loss", compiled_loss(batch, outs).item<double>() + 0.0}};
}

std::vector<at::Tensor> Trainer::call_model(const data::Batch& batch) { return model_outputs(batch.inputs()); }

at::Tensor Trainer::compiled_loss(const data::Batch& batch, const std::vector<at::Tensor>& outputs) {
  at::Tensor loss = evaluating_ ? outputs_->total_loss(outputs, batch.targets(), batch.sample_weight,
                                                       model_->output_masks(), {}, step_sums_)
                                : training_loss(outputs, batch.targets(), batch.sample_weight, step_sums_);
  if (at::Tensor reg = model_->regularization_loss(); reg.defined()) loss = loss + reg;  // Keras: + sum(model.losses)
  return loss;
}

void Trainer::minimize(const at::Tensor& loss) {
  reset_gradients();
  {
    RECORD_USER_SCOPE("torchfit::backward");
    at::Tensor scaled = step_share_ == 1.0 ? loss : loss * step_share_;
    (loss_scaler_ ? loss_scaler_->scale_loss(scaled) : scaled).backward();
    last_allreduce_ms_ = data_parallel_ ? data_parallel_->finish_gradients() : 0.0;
  }
  {
    RECORD_USER_SCOPE("torchfit::optimizer");
    apply_gradients();
  }
}

void Trainer::update_metrics(const data::Batch& batch, const std::vector<at::Tensor>& outputs) {
  if (!step_sums_) return;
  std::vector<at::Tensor> detached;
  for (const auto& o : outputs) detached.push_back(o.detach());
  // The weighted metrics read the batch's sample weights (training: the class weights, when fit has them).
  outputs_->update(detached, batch.targets(), *step_sums_, batch.sample_weight,
                   evaluating_ ? at::Tensor() : class_weight_);
}

}  // namespace torchfit
