#include <torchfit/training/trainer.h>

#include <algorithm>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <string_view>

#include <torchfit/runtime/logging.h>

#include <torchfit/distributed/gradient_reducer.h>
#include <torchfit/distributed/process_group.h>
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
#include "training/device_prefetcher.h"

namespace torchfit {

/// Sums over an epoch's steps, weighted by batch size: the running means of the batch logs and the
/// epoch's training means.
struct Trainer::EpochMeans {
  double loss_sum = 0;
  std::vector<double> metric_sums;  // MetricSet statistics: sums over the steps (and ranks)
  int64_t seen = 0;

  void add(double loss, const std::vector<double>& batch_metric_sums, int64_t n) {
    loss_sum += loss * static_cast<double>(n);
    for (size_t i = 0; i < metric_sums.size(); ++i) metric_sums[i] += batch_metric_sums[i];
    seen += n;
  }
  /// "loss" and the metric names; nan when no step ran (a resumed epoch that was already complete).
  Logs logs(const MetricSet& metrics) const {
    const double none = std::numeric_limits<double>::quiet_NaN();
    Logs out = metrics.results(metric_sums);
    if (seen == 0)
      for (auto& kv : out) kv.second = none;
    out["loss"] = seen > 0 ? loss_sum / static_cast<double>(seen) : none;
    return out;
  }
};

namespace {

// The stream settings of `train`, with the world size of a data-parallel run (a checkpoint records them).
data::StreamConfig stream_config_of(const data::BatchIterator& train, int world_size) {
  data::StreamConfig c = train.stream_config();
  if (world_size > 1) c["world_size"] = std::to_string(world_size);
  return c;
}

// Hex of libstdc++'s hash of `bytes` (the same binary on every rank gives the same value).
std::string hash_text(std::string_view bytes) {
  char out[17];
  std::snprintf(out, sizeof out, "%016zx", std::hash<std::string_view>{}(bytes));
  return out;
}

// The classes in index order and a hash of the file list (relative names, in order): ranks whose folders
// hold the same number of files under other names or classes would otherwise train on other labels.
void add_source_identity(std::map<std::string, std::string>& s, const std::string& prefix,
                         const data::BatchIterator& source) {
  std::map<int64_t, std::string> by_index;
  for (const auto& [name, index] : source.class_indices()) by_index[index] = name;
  std::string classes, files;
  for (const auto& [index, name] : by_index) classes += (classes.empty() ? "" : ", ") + name;
  for (const auto& f : source.filenames()) files += f + "\n";
  if (!classes.empty()) s[prefix + "classes"] = classes;
  if (!files.empty()) s[prefix + "files (hash of the names)"] = hash_text(files);
}

// A hash of the weights' bytes (thread-count independent): ranks that resumed from different checkpoints
// at the same position would otherwise go on with different optimizer states.
std::string weights_hash(Sequential& model) {
  std::string hashes;  // one hash per tensor, hashed together: no copy of the weights' bytes
  for (const auto& p : model->parameters()) {
    const at::Tensor c = p.detach().cpu().contiguous();
    hashes += hash_text({static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.nbytes())});
  }
  return hash_text(hashes);
}

// What every rank of a data-parallel run must share: the data stream, the schedule and resume position,
// the model's layers and the optimizer. torchrun starts each rank with its own flags; ranks that differ
// would crash in a collective or train wrong without a word.
std::map<std::string, std::string> rank_settings(Trainer& t, const data::BatchIterator& train,
                                                 const data::StreamConfig& data, const FitOptions& opt, int64_t steps) {
  std::map<std::string, std::string> s;
  for (const auto& [key, value] : data) s["data " + key] = value;
  add_source_identity(s, "data ", train);
  if (opt.validation_data()) {
    for (const auto& [key, value] : opt.validation_data()->stream_config()) s["validation data " + key] = value;
    add_source_identity(s, "validation data ", *opt.validation_data());
  }
  if (!opt.resume_from().empty()) s["resumed checkpoint's weights (hash)"] = weights_hash(t.model());
  s["epochs"] = std::to_string(opt.epochs());
  s["steps per epoch"] = std::to_string(steps);
  s["validation steps"] = std::to_string(opt.validation_steps());
  s["start (epoch, step)"] = std::to_string(opt.initial_epoch()) + ", " + std::to_string(opt.initial_step());
  s["model"] = t.model()->to_json().dump();
  s["loss"] = t.compile_options().loss();
  s["optimizer"] = t.compile_options().optimizer().name();
  s["learning rate"] = nlohmann::json(t.learning_rate()).dump();
  return s;
}

// `v` whole when short, else a window around `from` (where two long values first differ).
std::string shortened(const std::string& v, size_t from) {
  if (v.size() <= 80) return v;
  const size_t start = from > 30 ? from - 30 : 0;
  return (start > 0 ? "..." : "") + v.substr(start, 60) + (start + 60 < v.size() ? "..." : "");
}

// "key: rank 0 has A, this rank has B; ..." for every setting that differs (empty when none).
std::string setting_differences(const std::map<std::string, std::string>& root,
                                const std::map<std::string, std::string>& mine) {
  std::string out;
  auto add = [&](const std::string& key, const std::string& a, const std::string& b) {
    const size_t from = static_cast<size_t>(
        std::mismatch(a.begin(), a.begin() + std::min(a.size(), b.size()), b.begin()).first - a.begin());
    out += (out.empty() ? "" : "; ") + key + ": rank 0 has " + shortened(a, from) + ", this rank has " +
           shortened(b, from);
  };
  for (const auto& [key, value] : root) {
    auto it = mine.find(key);
    if (it == mine.end())
      add(key, value, "none");
    else if (it->second != value)
      add(key, value, it->second);
  }
  for (const auto& [key, value] : mine)
    if (!root.count(key)) add(key, "none", value);
  return out;
}

}  // namespace

Trainer::Trainer(Sequential model, CompileOptions options, c10::Device device)
    : model_(std::move(model)), options_(std::move(options)), device_(device) {
  runtime::init_process();
  check_loss(options_.loss());
  if (model_->layers().empty()) throw ConfigError("Trainer: the model has no layers");
  metric_names_ = options_.metrics();
  from_logits_ = loss_uses_logits(options_.loss(), model_->output_activation());
  const auto& out_shape = model_->output_shape();
  metrics_ = std::make_shared<MetricSet>(metric_names_, options_.loss(), from_logits_,
                                         out_shape.empty() ? 1 : out_shape.back());
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

void Trainer::set_class_weight(const std::map<int64_t, double>& weights) {
  class_weight_ = at::Tensor();
  class_weight_values_.clear();
  if (weights.empty()) return;
  const auto& shape = model_->output_shape();
  const int64_t k = shape.empty() ? 1 : std::max<int64_t>(shape.back(), 2);  // one sigmoid unit: classes 0, 1
  for (int64_t c = 0; c < k; ++c) {
    const auto it = weights.find(c);
    if (it == weights.end()) throw ConfigError("fit: class_weight has no weight for class " + std::to_string(c));
    if (!std::isfinite(it->second) || it->second < 0)
      throw ConfigError("fit: class_weight of class " + std::to_string(c) + " must be a finite number >= 0");
    class_weight_values_.push_back(it->second);
  }
  if (weights.rbegin()->first >= k || weights.begin()->first < 0) {
    throw ConfigError("fit: class_weight names class " + std::to_string(weights.rbegin()->first) + ", the model has " +
                      std::to_string(k) + " classes");
  }
  class_weight_ = at::tensor(class_weight_values_, at::kFloat).to(device_);
}

at::Tensor Trainer::training_loss(const at::Tensor& out, const at::Tensor& y) const {
  if (!class_weight_.defined()) return compute_loss(options_.loss(), out, y, from_logits_);
  return compute_weighted_loss(options_.loss(), out, y, from_logits_, class_weight_);
}

double Trainer::learning_rate() const { return optimizer_->param_groups().at(0).options().get_lr(); }

void Trainer::set_learning_rate(double lr) {
  if (!(lr > 0) || !std::isfinite(lr)) throw ConfigError("learning rate must be > 0, got " + std::to_string(lr));
  if (features_->has_schedule()) {
    throw ConfigError(
        "the optimizer follows a learning-rate schedule: its learning rate is not settable "
        "(as Keras; a callback or --lr with --resume cannot change it)");
  }
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
  return compute_step(x, y, metric_sums, 1.0);
}

// One step; `loss_scale` multiplies the loss before backward (data-parallel: this shard's share of the
// global batch, so that the summed gradients are the global batch's mean). An empty shard (the last,
// partial batch of a pass split over more ranks than it has samples) only takes part in the allreduce.
double Trainer::compute_step(const at::Tensor& x, const at::Tensor& y, std::vector<double>* metric_sums,
                             double loss_scale) {
  if (reducer_) {
    reducer_->zero_grad();  // the gradients are views into its buffer: zeroed, never reset
  } else {
    // Gradients set to none rather than zero-filled: backward writes fresh gradient tensors.
    for (auto& p : model_->parameters()) p.mutable_grad().reset();
  }
  if (x.size(0) == 0) {
    last_allreduce_ms_ = reducer_ ? reducer_->finish() : 0.0;
    apply_gradients();
    return 0.0;
  }
  at::Tensor out = model_output(x);
  at::Tensor loss = training_loss(out, y);
  at::Tensor scaled = loss_scale == 1.0 ? loss : loss * loss_scale;
  (loss_scaler_ ? loss_scaler_->scale_loss(scaled) : scaled).backward();
  last_allreduce_ms_ = reducer_ ? reducer_->finish() : 0.0;
  apply_gradients();
  if (metric_sums) metrics_->update(out.detach(), y, *metric_sums);
  return loss.item<double>() + 0.0;  // + 0.0 turns a loss of -0 (a product with 0) into 0, as Keras reports it
}

// ---------------------------------------------------------------- data-parallel
/// Ends fit()'s data-parallel state however fit() ends: hooks removed, sources whole again.
struct Trainer::DataParallelScope {
  Trainer& trainer;
  data::BatchIterator& train;
  data::BatchIterator* validation;
  DataParallelScope(Trainer& t, data::BatchIterator& tr, data::BatchIterator* val)
      : trainer(t), train(tr), validation(val) {}
  ~DataParallelScope() {
    if (!trainer.group_) return;
    trainer.reducer_.reset();
    trainer.group_.reset();
    try {
      train.shard(0, 1);
      if (validation) validation->shard(0, 1);
    } catch (...) {  // shard(0, 1) is always valid
    }
  }
};

int Trainer::rank() const { return group_ ? group_->rank() : 0; }
int Trainer::world_size() const { return group_ ? group_->world_size() : 1; }

nlohmann::json Trainer::distributed_info() const {
  if (!group_) return {{"world_size", 1}};
  nlohmann::json info = {
      {"world_size", group_->world_size()}, {"backend", group_->backend()}, {"timeout_s", group_->timeout().count()}};
  if (reducer_) info.update({{"gradient_buckets", reducer_->buckets()}, {"gradient_bytes", reducer_->bytes()}});
  return info;
}

// Every rank compares its settings with rank 0's before any step; all ranks fail together, each naming
// what differs on it (rank 0: which ranks differ).
void Trainer::check_ranks_agree(const data::BatchIterator& train, const FitOptions& opt, int64_t steps) {
  const auto mine = rank_settings(*this, train, position_.data, opt, steps);
  const std::string root_text = group_->broadcast_text(nlohmann::json(mine).dump(), 0);
  const std::string differences =
      setting_differences(nlohmann::json::parse(root_text).get<std::map<std::string, std::string>>(), mine);
  std::vector<double> differ(static_cast<size_t>(group_->world_size()), 0.0);
  differ[static_cast<size_t>(group_->rank())] = differences.empty() ? 0.0 : 1.0;
  differ = group_->allreduce_sum(differ);
  const std::string advice = " (torchrun starts every rank with the same flags: launch all ranks alike)";
  if (!differences.empty()) {
    throw ConfigError("data-parallel: rank " + std::to_string(group_->rank()) +
                      " was started with other settings than rank 0: " + differences + advice);
  }
  std::string ranks;
  for (size_t r = 0; r < differ.size(); ++r)
    if (differ[r] > 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  if (!ranks.empty()) {
    throw ConfigError("data-parallel: rank(s) " + ranks +
                      " were started with other settings than rank 0 (each names the difference)" + advice);
  }
}

// CUDA: the sources write their batches into pinned memory, so the prefetcher's copies are asynchronous.
void Trainer::pin_sources(data::BatchIterator& train, const FitOptions& opt) const {
  if (!device_.is_cuda()) return;
  train.set_pin_memory(true);
  if (opt.validation_data()) opt.validation_data()->set_pin_memory(true);
}

void Trainer::start_data_parallel(data::BatchIterator& train, const FitOptions& opt) {
  const int rank = group_->rank(), world = group_->world_size();
  train.shard(rank, world);
  if (opt.validation_data()) opt.validation_data()->shard(rank, world);
  // Rank 0's weights (fresh, or the resumed checkpoint's) on every rank.
  std::vector<at::Tensor> state = model_->parameters();
  for (const auto& b : model_->buffers()) state.push_back(b);
  {
    at::NoGradGuard no_grad;
    group_->broadcast(state, 0);
  }
  reducer_ = std::make_shared<distributed::GradientReducer>(group_, model_->parameters());
  // Dropout: a random stream per rank, derived from the shared state (the same on every run).
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    const uint64_t base = at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
    gen.set_current_seed(base ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(rank + 1)));
  }
  torchfit::logger().info(
      "data-parallel: rank {} of {} ({}), global batch {} = {} per rank, {} gradient buckets ({:.1f} MB)", rank, world,
      group_->backend(), train.batch_size(), train.batch_size() / world, reducer_->buckets(),
      static_cast<double>(reducer_->bytes()) / 1e6);
}

// Global step values: the loss and metric sums over all ranks' shards, the global batch size, and
// whether any rank was interrupted (so that all stop at the same step).
void Trainer::reduce_step(double& loss, std::vector<double>& sums, int64_t& n, StepTiming& t) {
  const double t0 = detail::steady_ms();
  const int own_signal = runtime::interrupt_signal();
  std::vector<double> v = {loss * static_cast<double>(n), static_cast<double>(n), own_signal != 0 ? 1.0 : 0.0,
                           static_cast<double>(own_signal)};
  v.insert(v.end(), sums.begin(), sums.end());
  v = group_->allreduce_sum(v);
  n = std::llround(v[1]);
  loss = v[1] > 0 ? v[0] / v[1] : 0.0;
  interrupt_any_ = v[2] > 0;
  // A rank stopped by a peer takes the peer's signal: the mean of the interrupted ranks' signals, exact when
  // they agree (torchrun forwards one SIGTERM to all), else SIGINT's. Its own signal comes first.
  if (interrupt_any_ && own_signal == 0) {
    const double mean = v[3] / v[2];
    interrupt_signal_ = std::fabs(mean - std::round(mean)) < 1e-9 ? static_cast<int>(std::lround(mean)) : SIGINT;
  } else if (interrupt_any_) {
    interrupt_signal_ = own_signal;
  }
  std::copy(v.begin() + 4, v.end(), sums.begin());
  t.allreduce_ms += detail::steady_ms() - t0;
}

// ---------------------------------------------------------------- fit
History Trainer::fit(data::BatchIterator& train, const FitOptions& options) {
  runtime::init_process();
  timings_.clear();
  stop_training = false;
  interrupted_ = false;
  interrupt_signal_ = 0;
  prefetcher_->clear();      // a batch taken ahead by an interrupted fit() is not carried over
  FitOptions opt = options;  // resume_from sets initial_epoch and initial_step
  group_ = opt.process_group();
  DataParallelScope data_parallel(*this, train, opt.validation_data());
  const FitParams params = fit_params(train, opt);
  set_class_weight(opt.class_weight());
  pin_sources(train, opt);
  if (group_) {
    check_ranks_agree(train, opt, params.steps);
    start_data_parallel(train, opt);
  }
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
  if (opt.verbose() < 0 || opt.verbose() > 2) {
    throw ConfigError("fit: verbose must be 0, 1 or 2, got " + std::to_string(opt.verbose()));
  }
  if (opt.validation_steps() < 0) {
    throw ConfigError("fit: validation_steps must be >= 0 (0 = the whole source), got " +
                      std::to_string(opt.validation_steps()));
  }
  const int64_t steps = opt.steps_per_epoch() > 0 ? opt.steps_per_epoch() : train.batches_per_pass();
  if (group_ && train.batch_size() % world_size() != 0) {
    throw ConfigError("fit: the batch size " + std::to_string(train.batch_size()) +
                      " is the global batch and must split evenly over the " + std::to_string(world_size()) +
                      " processes (use a multiple of " + std::to_string(world_size()) + ")");
  }
  if (!opt.resume_from().empty()) resume(opt.resume_from(), train, opt, steps);
  position_.data = stream_config_of(train, world_size());
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
  const auto saved = pos.data.find("world_size");
  const std::string saved_world = saved == pos.data.end() ? "1" : saved->second;
  if (saved_world != std::to_string(world_size())) {
    throw ConfigError("resume: checkpoint '" + path + "' was written by a run of " + saved_world +
                      " process(es), this run has " + std::to_string(world_size()) +
                      ": resume with the same number of processes (each one's data shard and random numbers "
                      "depend on it)");
  }
  const std::string differences = stream_differences(pos.data, stream_config_of(train, world_size()));
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
  means.metric_sums.assign(metrics_->state_size(), 0.0);
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
    if (group_ ? interrupt_any_ : runtime::interrupt_requested()) {
      interrupted_ = true;
      if (!group_) interrupt_signal_ = runtime::interrupt_signal();
      break;
    }
  }
  return means.logs(*metrics_);
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
  const at::Tensor& x = batch.x;
  const at::Tensor& y = batch.y;
  std::vector<double> sums(metrics_->state_size(), 0.0);
  int64_t n = batch.size;
  const int64_t global = batch.global_size > 0 ? batch.global_size : n;  // data-parallel: the whole batch
  double loss = compute_step(x, y, &sums, group_ ? static_cast<double>(n) / static_cast<double>(global) : 1.0);
  runtime::synchronize(device_);
  const double t4 = detail::steady_ms();
  t.allreduce_ms = last_allreduce_ms_;
  if (group_) reduce_step(loss, sums, n, t);
  means.add(loss, sums, n);
  Logs logs = means.logs(*metrics_);
  logs["batch_loss"] = loss;
  for (const auto& [name, value] : metrics_->results(sums, "batch_")) logs[name] = value;
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
  if (group_) logs["allreduce_ms"] = t.allreduce_ms;
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
  sums.metric_sums.assign(metrics_->state_size(), 0.0);
  for (int64_t s = 0; s < steps; ++s) {
    data::Batch batch = source.next();
    if (batch.size() == 0) continue;  // data-parallel: an empty shard of a short last batch
    auto [x, y] = to_device(batch);
    at::Tensor out = model_output(x);
    std::vector<double> batch_sums(metrics_->state_size(), 0.0);
    metrics_->update(out, y, batch_sums);
    sums.add(compute_loss(options_.loss(), out, y, from_logits_).item<double>() + 0.0, batch_sums, batch.size());
  }
  if (was_training) model_->train();
  if (group_) {  // data-parallel: the sums over every rank's shards
    std::vector<double> v = {sums.loss_sum, static_cast<double>(sums.seen)};
    v.insert(v.end(), sums.metric_sums.begin(), sums.metric_sums.end());
    v = group_->allreduce_sum(v);
    sums.loss_sum = v[0];
    sums.seen = std::llround(v[1]);
    std::copy(v.begin() + 2, v.end(), sums.metric_sums.begin());
  }
  if (sums.seen == 0) sums.seen = 1;  // an empty source reports zeros, not nan
  return sums.logs(*metrics_);
}

at::Tensor Trainer::predict(data::BatchIterator& source, int64_t steps, std::vector<int64_t>* indices) {
  return torchfit::predict(*model_, source, device_, steps, indices);
}

at::Tensor Trainer::predict(const at::Tensor& x) { return torchfit::predict(*model_, x, device_); }

void Trainer::save_checkpoint(const std::string& path, const std::map<std::string, int64_t>& class_indices) {
  io::TrainingState state{model_, optimizer_.get(), options_, position_, class_indices, nullptr};
  if (loss_scaler_) state.loss_scale = loss_scaler_->state();
  if (features_->enabled()) {
    state.optimizer_features = features_->state();
    state.optimizer_slots = features_->tensors();
  }
  io::save_checkpoint(path, state);
}

io::CheckpointInfo Trainer::load_checkpoint(const std::string& path, bool load_optimizer) {
  io::CheckpointInfo info = io::load_checkpoint(
      path, io::TrainingState{model_, load_optimizer ? optimizer_.get() : nullptr, options_, {}, {}, nullptr});
  position_ = info.position;
  if (loss_scaler_ && load_optimizer && !info.loss_scale.is_null()) loss_scaler_->load_state(info.loss_scale);
  if (load_optimizer && (features_->enabled() || !info.optimizer_features.is_null())) {
    const auto saved = info.optimizer_features.value("config", nlohmann::json());
    const auto now = features_->state()["config"];
    if (saved != now) {
      torchfit::logger().info("checkpoint '{}': optimizer settings {} → {}", path,
                              saved.is_null() ? "(none saved)" : saved.dump(), now.dump());
    }
    features_->load(info.optimizer_features.is_null() ? nlohmann::json::object() : info.optimizer_features,
                    info.optimizer_slots);
  }
  if (!loss_scaler_ && load_optimizer && !info.loss_scale.is_null()) {
    torchfit::logger().info("checkpoint '{}' holds a loss-scaling state ({}); this run has no loss scaling", path,
                            info.loss_scale.dump());
  }
  return info;
}

}  // namespace torchfit
