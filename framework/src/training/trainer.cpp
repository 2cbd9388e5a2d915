#include <torchfit/training/trainer.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <torchfit/runtime/logging.h>

#include <torchfit/error.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/predict.h>
#include <torchfit/training/progbar_logger.h>
#include <torchfit/training/run_logger.h>

#include "steady_clock.h"

namespace torchfit {

/// Sums over an epoch's steps, weighted by batch size: the running means of the batch logs and the
/// epoch's training means.
struct Trainer::EpochMeans {
  double loss_sum = 0;
  std::vector<double> metric_sums;
  int64_t seen = 0;

  void add(double loss, const std::vector<double>& batch_metric_sums, int64_t n) {
    loss_sum += loss * static_cast<double>(n);
    for (size_t i = 0; i < metric_sums.size(); ++i) metric_sums[i] += batch_metric_sums[i];
    seen += n;
  }
  /// "loss" and the metric names; nan when no step ran (a resumed epoch that was already complete).
  Logs logs(const std::vector<std::string>& names) const {
    const double none = std::numeric_limits<double>::quiet_NaN();
    const double n = static_cast<double>(seen);
    Logs out = {{"loss", seen > 0 ? loss_sum / n : none}};
    for (size_t i = 0; i < names.size(); ++i) out[names[i]] = seen > 0 ? metric_sums[i] / n : none;
    return out;
  }
};

Trainer::Trainer(Sequential model, CompileOptions options, c10::Device device)
    : model_(std::move(model)), options_(std::move(options)), device_(device) {
  runtime::init_process();
  check_loss(options_.loss());
  if (model_->layers().empty()) throw ConfigError("Trainer: the model has no layers");
  for (const auto& m : options_.metrics()) {
    metric_names_.push_back(m);
    resolved_metrics_.push_back(resolve_metric(m, options_.loss()));
  }
  from_logits_ = loss_uses_logits(options_.loss(), model_->output_activation());
  model_->to(device_);
  optimizer_ = make_optimizer(options_.optimizer(), model_->parameters());
}

double Trainer::learning_rate() const { return optimizer_->param_groups().at(0).options().get_lr(); }

void Trainer::set_learning_rate(double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) throw ConfigError("learning rate must be > 0, got " + std::to_string(lr));
  for (auto& g : optimizer_->param_groups()) g.options().set_lr(lr);
}

std::pair<at::Tensor, at::Tensor> Trainer::to_device(const data::Batch& batch) const {
  if (device_.is_cpu()) return {batch.x, batch.y};
  at::Tensor x = batch.x.to(device_, /*non_blocking=*/true);
  at::Tensor y = batch.y.defined() ? batch.y.to(device_, true) : batch.y;
  return {x, y};
}

at::Tensor Trainer::model_output(const at::Tensor& x) {
  return from_logits_ ? model_->forward_logits(x) : model_->forward(x);
}

double Trainer::train_step(const at::Tensor& x, const at::Tensor& y, std::vector<double>* metric_sums) {
  // Gradients set to none rather than zero-filled: backward writes fresh gradient tensors.
  for (auto& p : model_->parameters()) p.mutable_grad().reset();
  at::Tensor out = model_output(x);
  at::Tensor loss = compute_loss(options_.loss(), out, y, from_logits_);
  loss.backward();
  optimizer_->step();
  if (metric_sums) {
    at::Tensor detached = out.detach();
    for (size_t i = 0; i < resolved_metrics_.size(); ++i) {
      (*metric_sums)[i] += metric_sum(resolved_metrics_[i], detached, y, from_logits_);
    }
  }
  return loss.item<double>();
}

// ---------------------------------------------------------------- fit
History Trainer::fit(data::BatchIterator& train, const FitOptions& options) {
  runtime::init_process();
  timings_.clear();
  stop_training = false;
  interrupted_ = false;
  FitOptions opt = options;  // resume_from sets initial_epoch and initial_step
  const FitParams params = fit_params(train, opt);
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
  if (opt.verbose() < 0 || opt.verbose() > 2) {
    throw ConfigError("fit: verbose must be 0, 1 or 2, got " + std::to_string(opt.verbose()));
  }
  if (opt.validation_steps() < 0) {
    throw ConfigError("fit: validation_steps must be >= 0 (0 = the whole source), got " +
                      std::to_string(opt.validation_steps()));
  }
  const int64_t steps = opt.steps_per_epoch() > 0 ? opt.steps_per_epoch() : train.batches_per_pass();
  if (!opt.resume_from().empty()) resume(opt.resume_from(), train, opt, steps);
  position_.data = train.stream_config();
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
  return p;
}

namespace {

// "seed 42 → 7, augmentation none → rescale=..." for each stream setting that differs; "" when none.
std::string stream_differences(const data::StreamConfig& saved, const data::StreamConfig& now) {
  std::string text;
  for (const auto& [key, value] : saved) {
    const auto it = now.find(key);
    const std::string current = it == now.end() ? "(not set)" : it->second;
    if (current != value) text += (text.empty() ? "" : ", ") + key + " " + value + " → " + current;
  }
  return text;
}

}  // namespace

void Trainer::check_resumable(const std::string& path, const io::CheckpointInfo& info, const data::BatchIterator& train,
                              int64_t steps) const {
  const TrainingPosition& pos = info.position;
  const auto classes = train.class_indices();
  if (!info.class_indices.empty() && !classes.empty() && info.class_indices != classes) {
    throw ConfigError("resume: checkpoint '" + path + "' was trained on other classes than the training data");
  }
  if (pos.batch_size > 0 && pos.batch_size != train.batch_size()) {
    throw ConfigError("resume: checkpoint '" + path + "' was trained with batch size " +
                      std::to_string(pos.batch_size) + ", the training data gives batches of " +
                      std::to_string(train.batch_size()) + " (other batches would regroup the " +
                      std::to_string(pos.train_samples) + " samples already seen; use batch size " +
                      std::to_string(pos.batch_size) + ")");
  }
  const std::string differences = stream_differences(pos.data, train.stream_config());
  if (!differences.empty()) {
    throw ConfigError("resume: checkpoint '" + path + "' would not continue exactly: the training data differs (" +
                      differences + "); resume with the saved settings, or start a new run");
  }
  if (pos.step > steps) {
    throw ConfigError("resume: checkpoint '" + path + "' stopped at step " + std::to_string(pos.step) + " of epoch " +
                      std::to_string(pos.epoch + 1) + ", beyond steps_per_epoch " + std::to_string(steps));
  }
}

void Trainer::resume(const std::string& path, data::BatchIterator& train, FitOptions& opt, int64_t steps) {
  const io::CheckpointInfo info = load_checkpoint(path);
  check_resumable(path, info, train, steps);
  const TrainingPosition& pos = info.position;
  if (opt.resume_learning_rate() && *opt.resume_learning_rate() != learning_rate()) {
    torchfit::logger().info("resume: learning rate {} → {}", learning_rate(), *opt.resume_learning_rate());
    set_learning_rate(*opt.resume_learning_rate());
  }
  // Put the data sources where the saved run left them (same seed ⇒ the same next batches).
  train.skip(pos.train_batches);
  if (opt.validation_data() && opt.validation_steps() > 0) opt.validation_data()->skip(pos.val_batches);
  opt.initial_epoch(pos.epoch).initial_step(pos.step);
  torchfit::logger().info("resumed from '{}' at epoch {}, step {} ({} training batches, {} samples done)", path,
                          pos.epoch + 1, pos.step, pos.train_batches, pos.train_samples);
}

std::vector<CallbackPtr> Trainer::fit_callbacks(const FitOptions& opt, const CallbackPtr& history) const {
  std::vector<CallbackPtr> list;
  if (opt.verbose() > 0) {
    list.push_back(std::make_shared<ProgbarLogger>(
        ProgbarLoggerOptions().out(opt.out()).dynamic(opt.dynamic()).clock(opt.clock())));
  }
  if (!opt.run_dir().empty()) {
    list.push_back(std::make_shared<RunLogger>(RunLoggerOptions(opt.run_dir()).run_info(opt.run_info())));
  }
  list.insert(list.end(), opt.callbacks().begin(), opt.callbacks().end());
  list.push_back(history);
  return list;
}

Logs Trainer::train_epoch(data::BatchIterator& train, int epoch, int64_t first_step, const FitOptions& opt,
                          const FitParams& params, CallbackList& callbacks) {
  model_->train();
  EpochMeans means;
  means.metric_sums.assign(resolved_metrics_.size(), 0.0);
  for (int64_t step = first_step; step <= params.steps; ++step) {
    StepTiming t;
    t.epoch = epoch + 1;
    t.step = step;
    t.warmup = static_cast<int64_t>(timings_.size()) < params.warmup_steps;
    const Logs batch_logs = run_step(train, t, means);
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
    if (runtime::interrupt_requested()) {
      interrupted_ = true;
      break;
    }
  }
  return means.logs(metric_names_);
}

Logs Trainer::run_step(data::BatchIterator& train, StepTiming& t, EpochMeans& means) {
  const double t0 = detail::steady_ms();
  data::Batch batch = train.next();
  const double t1 = detail::steady_ms();
  auto [x, y] = to_device(batch);
  runtime::synchronize(device_);
  const double t2 = detail::steady_ms();
  std::vector<double> sums(resolved_metrics_.size(), 0.0);
  const double loss = train_step(x, y, &sums);
  runtime::synchronize(device_);
  const double t3 = detail::steady_ms();
  const int64_t n = batch.size();
  means.add(loss, sums, n);
  Logs logs = means.logs(metric_names_);
  logs["batch_loss"] = loss;
  for (size_t i = 0; i < sums.size(); ++i) logs["batch_" + metric_names_[i]] = sums[i] / static_cast<double>(n);
  t.size = n;
  t.data_ms = t1 - t0;
  t.h2d_ms = t2 - t1;
  t.compute_ms = t3 - t2;
  t.step_ms = detail::steady_ms() - t0;
  logs.insert({{"size", static_cast<double>(n)},
               {"data_ms", t.data_ms},
               {"h2d_ms", t.h2d_ms},
               {"compute_ms", t.compute_ms},
               {"step_ms", t.step_ms},
               {"warmup", t.warmup ? 1.0 : 0.0}});
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
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  at::NoGradGuard no_grad;
  const bool was_training = model_->is_training();
  model_->eval();
  EpochMeans sums;
  sums.metric_sums.assign(resolved_metrics_.size(), 0.0);
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    auto [x, y] = to_device(batch);
    at::Tensor out = model_output(x);
    std::vector<double> batch_sums(resolved_metrics_.size(), 0.0);
    for (size_t i = 0; i < batch_sums.size(); ++i)
      batch_sums[i] = metric_sum(resolved_metrics_[i], out, y, from_logits_);
    sums.add(compute_loss(options_.loss(), out, y, from_logits_).item<double>(), batch_sums, batch.size());
  }
  if (was_training) model_->train();
  if (sums.seen == 0) sums.seen = 1;  // an empty source reports zeros, not nan
  return sums.logs(metric_names_);
}

at::Tensor Trainer::predict(data::BatchIterator& source, int64_t steps, std::vector<int64_t>* indices) {
  return torchfit::predict(*model_, source, device_, steps, indices);
}

at::Tensor Trainer::predict(const at::Tensor& x) { return torchfit::predict(*model_, x, device_); }

void Trainer::save_checkpoint(const std::string& path, const std::map<std::string, int64_t>& class_indices) {
  io::save_checkpoint(path, io::TrainingState{model_, optimizer_.get(), options_, position_, class_indices});
}

io::CheckpointInfo Trainer::load_checkpoint(const std::string& path, bool load_optimizer) {
  io::CheckpointInfo info = io::load_checkpoint(
      path, io::TrainingState{model_, load_optimizer ? optimizer_.get() : nullptr, options_, {}, {}});
  position_ = info.position;
  return info;
}

}  // namespace torchfit
