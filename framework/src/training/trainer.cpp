#include <torchfit/training/trainer.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include <torch/optim/adam.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/fused_adam.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>

namespace torchfit {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string csv_number(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = static_cast<size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& o, std::vector<at::Tensor> params) {
  double lr = o.learning_rate();
  if (o.name() == "adam") {
    if (lr < 0) lr = 1e-3;
  } else if (o.name() == "sgd") {
    if (lr < 0) lr = 1e-2;
  } else if (o.name() == "rmsprop") {
    if (lr < 0) lr = 1e-3;
  } else {
    throw ConfigError("unknown optimizer '" + o.name() + "' (known: adam, sgd, rmsprop)");
  }
  if (!(lr > 0) || !std::isfinite(lr)) {
    throw ConfigError("learning rate must be > 0, got " + std::to_string(o.learning_rate()));
  }
  if (o.name() == "adam") {
    auto adam = torch::optim::AdamOptions(lr).betas({o.beta_1(), o.beta_2()}).eps(o.epsilon());
    if (!o.fused()) return std::make_unique<torch::optim::Adam>(params, adam);
    return std::make_unique<FusedAdam>(params, adam);
  }
  if (o.name() == "sgd") {
    return std::make_unique<torch::optim::SGD>(
        params, torch::optim::SGDOptions(lr).momentum(o.momentum()).nesterov(o.nesterov()));
  }
  return std::make_unique<torch::optim::RMSprop>(
      params, torch::optim::RMSpropOptions(lr).alpha(o.rho()).eps(o.epsilon()).momentum(o.momentum()));
}

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

History Trainer::fit(data::BatchIterator& train, const FitOptions& opt) {
  const int threads = runtime::init_process();
  if (opt.epochs() < 0) throw ConfigError("fit: epochs must be >= 0, got " + std::to_string(opt.epochs()));
  if (opt.steps_per_epoch() < 0) throw ConfigError("fit: steps_per_epoch must be >= 0");
  const int64_t steps = opt.steps_per_epoch() > 0 ? opt.steps_per_epoch() : train.batches_per_pass();
  std::ostream& out = opt.out() ? *opt.out() : std::cout;
  const bool dynamic = opt.dynamic() ? *opt.dynamic() : is_terminal(out);

  // Run files: probe the directory before any work (never fail after an hour of training).
  std::ofstream steps_csv, epochs_csv;
  nlohmann::json run_json = nlohmann::json::object();
  const std::string run_dir = opt.run_dir();
  const int64_t train_flops_per_sample = model_->train_flops_per_sample();
  std::vector<std::string> metric_cols = metric_names_;
  const auto write_run_json = [&] {
    io::write_text_atomically((std::filesystem::path(run_dir) / "run.json").string(), run_json.dump(2));
  };
  if (!run_dir.empty()) {
    io::ensure_writable_directory(run_dir);
    namespace fs = std::filesystem;
    steps_csv.open(fs::path(run_dir) / "steps.csv", std::ios::trunc);
    epochs_csv.open(fs::path(run_dir) / "epochs.csv", std::ios::trunc);
    if (!steps_csv || !epochs_csv) throw IoError("cannot create steps.csv/epochs.csv in '" + run_dir + "'");
    steps_csv << "epoch,step,data_ms,h2d_ms,compute_ms,step_ms,loss";
    for (const auto& m : metric_cols) steps_csv << "," << m;
    steps_csv << "\n";
    epochs_csv << "epoch,loss";
    for (const auto& m : metric_cols) epochs_csv << "," << m;
    epochs_csv << ",val_loss";
    for (const auto& m : metric_cols) epochs_csv << ",val_" << m;
    epochs_csv << ",seconds,ms_per_step_median,ms_per_step_p90,images_per_s,data_wait_share\n" << std::flush;
    run_json["environment"] = runtime::environment_info(device_, threads);
    run_json["device"] = device_.str();
    run_json["threads"] = threads;
    run_json["parameters"] = model_->count_params();
    run_json["flops_per_sample_forward"] = model_->flops_per_sample();
    run_json["flops_per_sample_train"] = train_flops_per_sample;
    run_json["flops_per_step"] = train_flops_per_sample * train.batch_size();
    run_json["model"] = model_->to_json();
    run_json["memory_format"] = {{"requested", model_->memory_format()},
                                 {"used", model_->uses_channels_last(device_) ? "channels_last" : "contiguous"}};
    run_json["pool_before_relu"] = model_->pool_before_relu();
    run_json["arguments"] = opt.run_info();
    run_json["compile"] = {{"loss", options_.loss()},
                           {"optimizer", options_.optimizer().name()},
                           {"learning_rate", learning_rate()},
                           {"metrics", metric_names_}};
    run_json["epochs"] = opt.epochs();
    run_json["steps_per_epoch"] = steps;
    run_json["batch_size"] = train.batch_size();
    run_json["warmup_steps"] = opt.warmup_steps();
    run_json["status"] = "running";
    write_run_json();
  }

  // A failure after the run files exist is recorded in run.json (status "failed", error) and rethrown.
  auto train_body = [&]() -> History {
    History history;
    timings_.clear();
    stop_training = false;
    interrupted_ = false;
    if (opt.initial_step() < 0 || opt.initial_step() > steps) {
      throw ConfigError("fit: initial_step must be in [0, steps_per_epoch], got " + std::to_string(opt.initial_step()));
    }
    for (auto& cb : opt.callbacks()) cb->set_trainer(this);
    for (auto& cb : opt.callbacks()) cb->on_train_begin({});

    int64_t global_step = 0;
    Logs logs;
    nlohmann::json epoch_summaries = nlohmann::json::array();
    for (int epoch = opt.initial_epoch(); epoch < opt.epochs() && !stop_training && !interrupted_; ++epoch) {
      const int64_t first_step = epoch == opt.initial_epoch() ? opt.initial_step() + 1 : 1;
      for (auto& cb : opt.callbacks()) cb->on_epoch_begin(epoch, {{"lr", learning_rate()}});
      if (opt.verbose() > 0 && opt.epochs() > 1) out << "Epoch " << epoch + 1 << "/" << opt.epochs() << "\n" << std::flush;
      Progbar bar(steps, opt.verbose(), dynamic, out, opt.clock());
      model_->train();
      double loss_sum = 0;
      std::vector<double> metric_sums(resolved_metrics_.size(), 0.0);
      int64_t seen = 0;
      std::vector<double> step_ms_list;
      double data_total = 0, step_total = 0;
      int64_t timed_images = 0;
      const double epoch_start = now_ms();
      for (int64_t step = first_step; step <= steps; ++step) {
        StepTiming t;
        t.epoch = epoch + 1;
        t.step = step;
        t.warmup = global_step < opt.warmup_steps();
        const double t0 = now_ms();
        data::Batch batch = train.next();
        const double t1 = now_ms();
        auto [x, y] = to_device(batch);
        runtime::synchronize(device_);
        const double t2 = now_ms();
        std::vector<double> batch_metrics(resolved_metrics_.size(), 0.0);
        const double loss = train_step(x, y, &batch_metrics);
        runtime::synchronize(device_);
        const double t3 = now_ms();
        if (opt.terminate_on_nan() && !std::isfinite(loss)) {
          throw Error("non-finite loss (" + std::to_string(loss) + ") at epoch " + std::to_string(epoch + 1) +
                      ", step " + std::to_string(step) + ": training stopped (lower the learning rate?)");
        }
        const int64_t n = batch.size();
        seen += n;
        ++position_.train_batches;
        position_.epoch = epoch;
        position_.step = step;
        loss_sum += loss * static_cast<double>(n);
        for (size_t i = 0; i < metric_sums.size(); ++i) metric_sums[i] += batch_metrics[i];
        Progbar::Values running = {{"loss", loss_sum / static_cast<double>(seen)}};
        for (size_t i = 0; i < metric_sums.size(); ++i) {
          running.emplace_back(metric_names_[i], metric_sums[i] / static_cast<double>(seen));
        }
        bar.update(step, running);
        Logs batch_logs = {{"loss", loss}, {"size", static_cast<double>(n)}};
        for (auto& cb : opt.callbacks()) cb->on_train_batch_end(step - 1, batch_logs);
        const double t4 = now_ms();
        t.data_ms = t1 - t0;
        t.h2d_ms = t2 - t1;
        t.compute_ms = t3 - t2;
        t.step_ms = t4 - t0;
        timings_.push_back(t);
        if (!t.warmup) {
          step_ms_list.push_back(t.step_ms);
          data_total += t.data_ms;
          step_total += t.step_ms;
          timed_images += n;
        }
        if (steps_csv.is_open()) {
          steps_csv << t.epoch << "," << t.step << "," << csv_number(t.data_ms) << "," << csv_number(t.h2d_ms) << ","
                    << csv_number(t.compute_ms) << "," << csv_number(t.step_ms) << "," << csv_number(loss);
          for (size_t i = 0; i < batch_metrics.size(); ++i) {
            steps_csv << "," << csv_number(batch_metrics[i] / static_cast<double>(n));
          }
          steps_csv << "\n" << std::flush;
        }
        ++global_step;
        if (runtime::interrupt_requested()) {
          interrupted_ = true;
          break;
        }
      }
      if (interrupted_) {
        if (opt.verbose() > 0) out << "\n" << std::flush;
        break;
      }
      const double train_seconds = (now_ms() - epoch_start) / 1000.0;

      logs.clear();
      // No step ran when resuming after an epoch's last step: no training mean to report (nan).
      const double no_mean = std::numeric_limits<double>::quiet_NaN();
      logs["loss"] = seen > 0 ? loss_sum / static_cast<double>(seen) : no_mean;
      for (size_t i = 0; i < metric_sums.size(); ++i) {
        logs[metric_names_[i]] = seen > 0 ? metric_sums[i] / static_cast<double>(seen) : no_mean;
      }
      Progbar::Values final_values = {{"loss", logs["loss"]}};
      for (const auto& m : metric_names_) final_values.emplace_back(m, logs[m]);
      if (opt.validation_data()) {
        Logs val = evaluate(*opt.validation_data(), opt.validation_steps());
        position_.val_batches += opt.validation_steps();
        model_->train();
        for (const auto& [k, v] : val) logs["val_" + k] = v;
        final_values.emplace_back("val_loss", logs["val_loss"]);
        for (const auto& m : metric_names_) final_values.emplace_back("val_" + m, logs["val_" + m]);
      }
      bar.finalize(final_values);
      logs["lr"] = learning_rate();

      const double seconds = (now_ms() - epoch_start) / 1000.0;
      const double median = percentile(step_ms_list, 0.5);
      const double p90 = percentile(step_ms_list, 0.9);
      // Throughput over the timed (non-warm-up) steps; falls back to the whole epoch when all were warm-up.
      const double images_per_s = step_total > 0 ? static_cast<double>(timed_images) / (step_total / 1000.0)
                                                 : static_cast<double>(seen) / std::max(train_seconds, 1e-9);
      const double data_share = step_total > 0 ? data_total / step_total : 0.0;
      if (epochs_csv.is_open()) {
        auto val_or_empty = [&](const std::string& k) {
          auto it = logs.find(k);
          return it == logs.end() ? std::string() : csv_number(it->second);
        };
        epochs_csv << epoch + 1 << "," << csv_number(logs["loss"]);
        for (const auto& m : metric_cols) epochs_csv << "," << csv_number(logs[m]);
        epochs_csv << "," << val_or_empty("val_loss");
        for (const auto& m : metric_cols) epochs_csv << "," << val_or_empty("val_" + m);
        epochs_csv << "," << csv_number(seconds) << "," << csv_number(median) << "," << csv_number(p90) << ","
                   << csv_number(images_per_s) << "," << csv_number(data_share) << "\n"
                   << std::flush;
      }
      nlohmann::json summary = {{"epoch", epoch + 1},
                                {"seconds", seconds},
                                {"train_seconds", train_seconds},
                                {"ms_per_step_median", median},
                                {"ms_per_step_p90", p90},
                                {"images_per_s", images_per_s},
                                {"data_wait_share", data_share},
                                {"gflops_per_s", median > 0 ? static_cast<double>(train_flops_per_sample) *
                                                                  static_cast<double>(train.batch_size()) /
                                                                  (median / 1000.0) / 1e9
                                                            : 0.0}};
      for (const auto& [k, v] : logs) summary[k] = v;
      epoch_summaries.push_back(summary);

      history.epoch.push_back(epoch);
      for (const auto& [k, v] : logs) history.history[k].push_back(v);
      position_.epoch = epoch + 1;
      position_.step = 0;
      for (auto& cb : opt.callbacks()) cb->on_epoch_end(epoch, logs);
    }
    for (auto& cb : opt.callbacks()) cb->on_train_end(logs);

    if (!run_dir.empty()) {
      nlohmann::json warm = nlohmann::json::array();
      for (const auto& t : timings_) {
        if (t.warmup) {
          warm.push_back({{"epoch", t.epoch}, {"step", t.step}, {"data_ms", t.data_ms}, {"h2d_ms", t.h2d_ms},
                          {"compute_ms", t.compute_ms}, {"step_ms", t.step_ms}});
        }
      }
      run_json["warmup"] = warm;
      run_json["epoch_summaries"] = epoch_summaries;
      run_json["final_metrics"] = logs;
      run_json["status"] = interrupted_ ? "interrupted" : stop_training ? "stopped early" : "completed";
      run_json["position"] = {{"epoch", position_.epoch}, {"step", position_.step},
                              {"train_batches", position_.train_batches}, {"val_batches", position_.val_batches}};
      write_run_json();
    }
    return history;
  };
  try {
    return train_body();
  } catch (const std::exception& e) {
    if (!run_dir.empty()) {
      try {
        run_json["status"] = "failed";
        run_json["error"] = e.what();
        write_run_json();
      } catch (const std::exception&) {
        // keep the original error
      }
    }
    throw;
  }
}

Logs Trainer::evaluate(data::BatchIterator& source, int64_t steps) {
  if (steps < 0) throw ConfigError("evaluate: steps must be >= 0");
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  at::NoGradGuard no_grad;
  const bool was_training = model_->is_training();
  model_->eval();
  double loss_sum = 0;
  std::vector<double> sums(resolved_metrics_.size(), 0.0);
  int64_t seen = 0;
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    auto [x, y] = to_device(batch);
    at::Tensor out = model_output(x);
    const int64_t n = batch.size();
    loss_sum += compute_loss(options_.loss(), out, y, from_logits_).item<double>() * static_cast<double>(n);
    for (size_t i = 0; i < sums.size(); ++i) sums[i] += metric_sum(resolved_metrics_[i], out, y, from_logits_);
    seen += n;
  }
  if (was_training) model_->train();
  Logs logs;
  const double denom = static_cast<double>(std::max<int64_t>(seen, 1));
  logs["loss"] = loss_sum / denom;
  for (size_t i = 0; i < sums.size(); ++i) logs[metric_names_[i]] = sums[i] / denom;
  return logs;
}

at::Tensor Trainer::predict(data::BatchIterator& source, int64_t steps, std::vector<int64_t>* indices) {
  if (steps < 0) throw ConfigError("predict: steps must be >= 0");
  if (steps == 0) {
    source.reset();
    steps = source.batches_per_pass();
  }
  std::vector<at::Tensor> outs;
  if (indices) indices->clear();
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    outs.push_back(predict(batch.x));
    if (indices) indices->insert(indices->end(), batch.indices.begin(), batch.indices.end());
  }
  return at::cat(outs, 0);
}

at::Tensor Trainer::predict(const at::Tensor& x) {
  at::NoGradGuard no_grad;
  const bool was_training = model_->is_training();
  model_->eval();
  at::Tensor out = model_->forward(x.to(device_)).to(at::kCPU);
  if (was_training) model_->train();
  return out;
}

}  // namespace torchfit
