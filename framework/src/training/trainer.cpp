#include <torchfit/training/trainer.h>

#include <torchfit/distributed/gradient_reducer.h>

#include <ATen/Context.h>
#include <ATen/record_function.h>
#include <cmath>
#include <limits>

#include <torchfit/error.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/class_weight.h>
#include <torchfit/training/data_parallel.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/predict.h>
#include <torchfit/training/progbar_logger.h>
#include <torchfit/training/resume.h>

#include "steady_clock.h"
#include "training/device_prefetcher.h"

namespace torchfit {

/// Sums over an epoch's steps, weighted by batch size: the running means of the batch logs and the
/// epoch's training means.
struct Trainer::EpochMeans {
  double loss_sum = 0;
  std::vector<double> metric_sums;  // MetricSet statistics: sums over the steps (and ranks)
  int64_t seen = 0;

  std::map<std::string, double> value_sums;  // a custom step's values besides "loss": Σ n · value

  void add(double loss, const std::vector<double>& batch_metric_sums, int64_t n) {
    loss_sum += loss * static_cast<double>(n);
    for (size_t i = 0; i < metric_sums.size(); ++i) metric_sums[i] += batch_metric_sums[i];
    seen += n;
  }
  void add_values(const Logs& values, int64_t n) {
    for (const auto& [name, v] : values)
      if (name != "loss") value_sums[name] += v * static_cast<double>(n);
  }
  /// "loss" and the metric names; nan when no step ran (a resumed epoch that was already complete).
  Logs logs(const CompiledOutputs& metrics) const {
    const double none = std::numeric_limits<double>::quiet_NaN();
    Logs out = metrics.results(metric_sums);
    if (seen == 0)
      for (auto& kv : out) kv.second = none;
    for (const auto& [name, sum] : value_sums) out[name] = seen > 0 ? sum / static_cast<double>(seen) : none;
    out["loss"] = seen > 0 ? loss_sum / static_cast<double>(seen) : none;
    return out;
  }
};

Trainer::~Trainer() = default;

Trainer::Trainer(Model model, CompileOptions options, c10::Device device)
    : model_(std::move(model)), options_(std::move(options)), device_(device) {
  runtime::init_process();
  check_loss(options_.loss());
  if (model_->layers().empty()) throw ConfigError("Trainer: the model has no layers");
  outputs_ = std::make_shared<CompiledOutputs>(options_, *model_);  // losses and metrics per output, their log names
  mixed_precision::check_supported(model_->dtype_policy(), device_);
  model_->to(device_);
  prefetcher_ = std::make_shared<detail::DevicePrefetcher>(device_);
  // Fixed shapes: cuDNN times its algorithms on the first step of each shape and keeps the fastest.
  if (device_.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);
  optimizer_ = make_optimizer(options_.optimizer(), model_->parameters());
  if (options_.loss_scale() || model_->dtype_policy().needs_loss_scaling()) {
    loss_scaler_ = std::make_unique<LossScaleOptimizer>(*optimizer_, model_->parameters(),
                                                        options_.loss_scale().value_or(LossScaleOptions()), device_);
  }
  features_ = std::make_unique<OptimizerFeatures>(options_.optimizer(), *optimizer_, model_->parameters(),
                                                  resolved_learning_rate(options_.optimizer()));
  if (loss_scaler_ && features_->changes_gradients()) {
    throw ConfigError(
        "loss scaling (mixed_float16) cannot be combined with gradient accumulation, clipping or "
        "weight decay yet (they would act on scaled gradients)");
  }
}

void Trainer::set_class_weight(const std::map<int64_t, double>& weights) {
  class_weight_ = at::Tensor();
  class_weight_values_.clear();
  if (weights.empty()) return;
  if (outputs_->outputs() > 1) {
    throw ConfigError(
        "fit: class_weight is for a model with one output (Keras 3: \"`class_weight` is only "
        "supported for Models with a single output\"); give sample weights instead");
  }
  const auto& shape = model_->output_shape();
  const int64_t k = shape.empty() ? 1 : std::max<int64_t>(shape.back(), 2);  // one sigmoid unit: classes 0, 1
  try {
    class_weight_values_ = class_weight_vector(weights, k);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("fit: ") + e.what());
  }
  class_weight_ = at::tensor(class_weight_values_, at::kFloat).to(device_);
}

double Trainer::learning_rate() const { return optimizer_->param_groups().at(0).options().get_lr(); }

void Trainer::set_learning_rate(double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) throw ConfigError("learning rate must be > 0, got " + std::to_string(lr));
  if (features_->has_schedule()) {
    throw ConfigError(
        "the optimizer follows a learning-rate schedule: its learning rate is not settable "
        "(as Keras; neither a callback nor resume_learning_rate can change it)");
  }
  for (auto& g : optimizer_->param_groups()) g.options().set_lr(lr);
}

detail::DeviceBatch Trainer::to_device(const data::Batch& batch) const {
  detail::DeviceBatch b = detail::DeviceBatch::of(batch);
  if (!device_.is_cpu()) b.each([&](const at::Tensor& t) { return t.to(device_, true); });
  return b;
}

// ---------------------------------------------------------------- data-parallel (data_parallel.h)
int Trainer::rank() const { return data_parallel_ ? data_parallel_->rank() : 0; }
int Trainer::world_size() const { return data_parallel_ ? data_parallel_->world_size() : 1; }

nlohmann::json Trainer::distributed_info() const {
  return data_parallel_ ? data_parallel_->info() : nlohmann::json{{"world_size", 1}};
}

bool Trainer::interrupt_agreed() const {
  return data_parallel_ ? data_parallel_->interrupted() : runtime::interrupt_requested();
}

// CUDA: the sources write their batches into pinned memory, so the prefetcher's copies are asynchronous.
void Trainer::pin_sources(data::BatchIterator& train, const FitOptions& opt) const {
  if (!device_.is_cuda()) return;
  train.set_pin_memory(true);
  if (opt.validation_data()) opt.validation_data()->set_pin_memory(true);
}

// ---------------------------------------------------------------- fit
History Trainer::fit(data::BatchIterator& train, const FitOptions& options) {
  if (options.validation_split() != 0.0) return fit_split(train, options);
  timings_.clear();
  stop_training = false;
  interrupted_ = false;
  interrupt_signal_ = 0;
  prefetcher_->clear();  // a batch taken ahead by an interrupted fit() is not carried over
  custom_names_ = step_names();
  FitOptions opt = options;  // resume_from sets initial_epoch and initial_step
  if (opt.process_group()) {
    data_parallel_ = std::make_shared<DataParallel>(opt.process_group(), train, opt.validation_data());
  }
  struct EndDataParallel {  // however fit() ends: the reducer's hooks removed, the sources whole again
    std::shared_ptr<DataParallel>& p;
    ~EndDataParallel() { p.reset(); }
  } end_data_parallel{data_parallel_};
  const FitParams params = fit_params(train, opt);
  set_class_weight(opt.class_weight());
  pin_sources(train, opt);
  if (data_parallel_) data_parallel_->start(*this, position_.data, opt, params.steps);
  auto history = std::make_shared<HistoryRecorder>();
  CallbackList callbacks(fit_callbacks(opt, history), this, params);
  Logs logs;  // the last finished epoch's
  try {
    callbacks.on_train_begin();
    for (int epoch = params.initial_epoch; epoch < params.epochs && !stop_training; ++epoch) {
      callbacks.on_epoch_begin(epoch, {{"lr", learning_rate()}});
      const int64_t first_step = epoch == params.initial_epoch ? params.initial_step + 1 : 1;
      Logs epoch_logs = train_epoch(train, epoch, first_step, opt, params, callbacks);
      if (interrupted_) break;
      validate(opt, epoch_logs);
      epoch_logs["lr"] = learning_rate();
      position_.epoch = epoch + 1;
      position_.step = 0;
      logs = std::move(epoch_logs);
      callbacks.on_epoch_end(epoch, logs);
    }
    if (!interrupted_) features_->finalize();  // use_ema: the averages become the weights (Keras)
    callbacks.on_train_end(logs);
  } catch (const std::exception& e) {
    callbacks.on_train_error(e.what());
    throw;
  }
  return history->history();
}

FitParams Trainer::fit_params(data::BatchIterator& train, FitOptions& opt) {
  if (opt.epochs() < 0) throw ConfigError("fit: epochs must be >= 0, got " + std::to_string(opt.epochs()));
  if (opt.steps_per_epoch() < 0) throw ConfigError("fit: steps_per_epoch must be >= 0");
  if (opt.warmup_steps() < 0) throw ConfigError("fit: warmup_steps must be >= 0");
  distributed::parse_gradient_compression(opt.gradient_compression(), "fit: gradient_compression");
  if (opt.verbose() < 0 || opt.verbose() > 2) {
    throw ConfigError("fit: verbose must be 0, 1 or 2, got " + std::to_string(opt.verbose()));
  }
  if (opt.validation_steps() < 0) {
    throw ConfigError("fit: validation_steps must be >= 0 (0 = the whole source), got " +
                      std::to_string(opt.validation_steps()));
  }
  data::expect_batched(train, "fit");
  const int64_t steps = opt.steps_per_epoch() > 0 ? opt.steps_per_epoch() : train.batches_per_pass();
  if (data_parallel_) {
    check_global_batch(train.batch_size(), world_size(), "fit: the batch size",
                       "the " + std::to_string(world_size()) + " processes");
  }
  data::StreamConfig stream = stream_config_of(train, world_size());
  if (opt.resumes()) {
    if (opt.resume_checkpoint() && !opt.resume_from().empty()) {
      throw ConfigError("fit: resume_from '" + opt.resume_from() + "' and resume_checkpoint '" +
                        opt.resume_checkpoint()->path() + "' are both set; give one");
    }
    const auto checkpoint =
        opt.resume_checkpoint() ? opt.resume_checkpoint() : saving::Checkpoint::read(opt.resume_from());
    resume_fit(*this, *checkpoint, train, stream, opt, steps);
  }
  position_.data = std::move(stream);
  preprocessing_ = train.preprocessing();
  if (opt.initial_step() < 0 || opt.initial_step() > steps) {
    throw ConfigError("fit: initial_step must be in [0, steps_per_epoch], got " + std::to_string(opt.initial_step()));
  }
  FitParams p;
  p.epochs = opt.epochs();
  p.steps = steps;
  p.verbose = opt.verbose();
  p.initial_epoch = opt.initial_epoch();
  p.initial_step = opt.initial_step();
  p.batch_size = train.batch_size();
  p.warmup_steps = opt.warmup_steps();
  p.validation = opt.validation_data() != nullptr;
  p.class_indices = train.class_indices();
  return p;
}

std::vector<CallbackPtr> Trainer::fit_callbacks(const FitOptions& opt, const CallbackPtr& history) const {
  std::vector<CallbackPtr> list;
  if (opt.verbose() > 0) {
    list.push_back(std::make_shared<ProgbarLogger>(
        ProgbarLoggerOptions().out(opt.out()).dynamic(opt.dynamic()).clock(opt.clock())));
  }
  list.insert(list.end(), opt.callbacks().begin(), opt.callbacks().end());
  list.push_back(history);
  return list;
}

Logs Trainer::train_epoch(data::BatchIterator& train, int epoch, int64_t first_step, const FitOptions& opt,
                          const FitParams& params, CallbackList& callbacks) {
  model_->train();
  EpochMeans means;
  means.metric_sums.assign(outputs_->state_size(), 0.0);
  for (int64_t step = first_step; step <= params.steps; ++step) {
    StepTiming t;
    t.epoch = epoch + 1;
    t.step = step;
    t.warmup = static_cast<int64_t>(timings_.size()) < params.warmup_steps;
    const Logs batch_logs = run_step(train, t, means, /*prefetch_next=*/step < params.steps);
    if (opt.terminate_on_nan() && !std::isfinite(batch_logs.at("batch_loss"))) {
      throw Error("non-finite loss (" + std::to_string(batch_logs.at("batch_loss")) + ") at epoch " +
                  std::to_string(epoch + 1) + ", step " + std::to_string(step) +
                  ": training stopped (lower the learning rate?)");
    }
    timings_.push_back(t);
    ++position_.train_batches;
    position_.train_samples += t.size;
    position_.batch_size = train.batch_size();
    position_.epoch = epoch;
    position_.step = step;
    callbacks.on_train_batch_end(step - 1, batch_logs);
    if (interrupt_agreed()) {
      interrupted_ = true;
      interrupt_signal_ = data_parallel_ ? data_parallel_->interrupt_signal() : runtime::interrupt_signal();
      break;
    }
  }
  return means.logs(*outputs_);
}

Logs Trainer::run_step(data::BatchIterator& train, StepTiming& t, EpochMeans& means, bool prefetch_next) {
  const double t0 = detail::steady_ms();
  if (!prefetcher_->pending()) prefetcher_->start(train.next());  // CPU: every step; CUDA: an epoch's first
  const double t1 = detail::steady_ms();
  detail::DeviceBatch batch = prefetcher_->take();
  runtime::synchronize(device_);
  const double t2 = detail::steady_ms();
  double data_ms = t1 - t0;
  if (prefetch_next && prefetcher_->asynchronous()) {  // the next batch's copy overlaps this step
    prefetcher_->start(train.next());
    data_ms += detail::steady_ms() - t2;
  }
  const double t3 = detail::steady_ms();
  std::vector<double> sums(outputs_->state_size(), 0.0);
  int64_t n = batch.size;
  // Data-parallel: this shard's share of the global batch.
  Logs values = compute_step(batch, &sums, data_parallel_ ? DataParallel::loss_share(n, batch.global_size) : 1.0);
  double loss = values.at("loss");
  runtime::synchronize(device_);
  const double t4 = detail::steady_ms();
  t.allreduce_ms = last_allreduce_ms_;
  if (data_parallel_) {  // a custom step's values travel with the loss: Σ n·value over the ranks, / Σ n
    const size_t k = sums.size();
    for (const auto& name : custom_names_) sums.push_back(n > 0 && values.count(name) ? values.at(name) * n : 0.0);
    data_parallel_->reduce_step(loss, sums, n, t.allreduce_ms);
    for (size_t i = 0; i < custom_names_.size(); ++i)
      values[custom_names_[i]] = n > 0 ? sums[k + i] / static_cast<double>(n) : 0.0;
    sums.resize(k);
  }
  means.add(loss, sums, n);
  means.add_values(values, n);
  Logs logs = means.logs(*outputs_);
  logs["batch_loss"] = loss;
  for (const auto& [name, value] : values)
    if (name != "loss") logs["batch_" + name] = value;
  for (const auto& [name, value] : outputs_->results(sums, "batch_")) logs[name] = value;
  t.size = n;
  t.data_ms = data_ms;
  t.h2d_ms = t2 - t1;
  t.compute_ms = t4 - t3;
  t.step_ms = detail::steady_ms() - t0;
  logs.insert({{"size", static_cast<double>(n)},
               {"data_ms", t.data_ms},
               {"h2d_ms", t.h2d_ms},
               {"compute_ms", t.compute_ms},
               {"step_ms", t.step_ms},
               {"warmup", t.warmup ? 1.0 : 0.0}});
  if (data_parallel_) logs["allreduce_ms"] = t.allreduce_ms;
  return logs;
}

void Trainer::validate(const FitOptions& opt, Logs& logs) {
  if (!opt.validation_data()) return;
  const Logs val = evaluate(*opt.validation_data(), opt.validation_steps());
  position_.val_batches += opt.validation_steps();
  model_->train();
  for (const auto& [k, v] : val) logs["val_" + k] = v;
}

// ---------------------------------------------------------------- evaluate, predict, checkpoints
Logs Trainer::evaluate(data::BatchIterator& source, int64_t steps) {
  if (steps < 0) throw ConfigError("evaluate: steps must be >= 0");
  data::expect_batched(source, "evaluate");
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  at::NoGradGuard no_grad;
  custom_names_ = step_names();
  struct Mode {  // eval mode and the test steps' loss while evaluating, restored however it ends
    Trainer& t;
    bool was_training, was_evaluating;
    ~Mode() {
      if (was_training) t.model_->train();
      t.evaluating_ = was_evaluating;
      t.step_sums_ = nullptr;
    }
  } mode{*this, model_->is_training(), evaluating_};
  model_->eval();
  evaluating_ = true;
  EpochMeans sums;
  sums.metric_sums.assign(outputs_->state_size(), 0.0);
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    if (batch.size() == 0) continue;  // data-parallel: an empty shard of a short last batch
    std::vector<double> batch_sums(outputs_->state_size(), 0.0);
    step_sums_ = &batch_sums;
    const Logs values = test_step(to_device(batch).as_batch());
    step_sums_ = nullptr;
    sums.add(step_loss(values, "test_step"), batch_sums, batch.size());
    sums.add_values(values, batch.size());
  }
  if (data_parallel_) {
    const size_t k = sums.metric_sums.size();
    for (const auto& name : custom_names_) sums.metric_sums.push_back(sums.value_sums[name]);
    data_parallel_->reduce_sums(sums.loss_sum, sums.seen, sums.metric_sums);
    for (size_t i = 0; i < custom_names_.size(); ++i) sums.value_sums[custom_names_[i]] = sums.metric_sums[k + i];
    sums.metric_sums.resize(k);
  }
  if (sums.seen == 0) sums.seen = 1;  // an empty source reports zeros, not nan
  return sums.logs(*outputs_);
}

at::Tensor Trainer::predict(data::BatchIterator& source, int64_t steps, std::vector<int64_t>* indices) {
  return torchfit::predict(*model_, source, device_, steps, indices);
}

at::Tensor Trainer::predict(const at::Tensor& x) { return torchfit::predict(*model_, x, device_); }

std::vector<at::Tensor> Trainer::predict_outputs(data::BatchIterator& source, int64_t steps,
                                                 std::vector<int64_t>* indices) {
  return torchfit::predict_outputs(*model_, source, device_, steps, indices);
}

}  // namespace torchfit
