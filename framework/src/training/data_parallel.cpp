#include <torchfit/training/data_parallel.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>

#include <ATen/CPUGeneratorImpl.h>

#include <torchfit/distributed/gradient_reducer.h>
#include <torchfit/distributed/process_group.h>
#include <torchfit/error.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/training/trainer.h>

#include "steady_clock.h"

namespace torchfit {
namespace {

using Settings = std::map<std::string, std::string>;

// Hex of libstdc++'s hash of `bytes` (the same binary on every rank gives the same value).
std::string hash_text(std::string_view bytes) {
  char out[17];
  std::snprintf(out, sizeof out, "%016zx", std::hash<std::string_view>{}(bytes));
  return out;
}

// The classes in index order and a hash of the file list (relative names, in order): ranks whose folders
// hold the same number of files under other names or classes would otherwise train on other labels.
void add_source_identity(Settings& s, const std::string& prefix, const data::BatchIterator& source) {
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
std::string weights_hash(Model& model) {
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
Settings rank_settings(Trainer& t, const data::BatchIterator& train, const data::StreamConfig& data,
                       const FitOptions& opt, int64_t steps) {
  Settings s;
  for (const auto& [key, value] : data) s["data " + key] = value;
  add_source_identity(s, "data ", train);
  if (opt.validation_data()) {
    for (const auto& [key, value] : opt.validation_data()->stream_config()) s["validation data " + key] = value;
    add_source_identity(s, "validation data ", *opt.validation_data());
  }
  if (opt.resumes()) s["resumed checkpoint's weights (hash)"] = weights_hash(t.model());
  s["epochs"] = std::to_string(opt.epochs());
  s["steps per epoch"] = std::to_string(steps);
  s["validation steps"] = std::to_string(opt.validation_steps());
  s["start (epoch, step)"] = std::to_string(opt.initial_epoch()) + ", " + std::to_string(opt.initial_step());
  s["model"] = t.model()->to_json().dump();
  s["loss"] = t.compile_options().loss();
  s["optimizer"] = t.compile_options().optimizer().name();
  s["learning rate"] = nlohmann::json(t.learning_rate()).dump();
  s["gradient compression"] = opt.gradient_compression();
  return s;
}

// `v` whole when short, else a window around `from` (where two long values first differ).
std::string shortened(const std::string& v, size_t from) {
  if (v.size() <= 80) return v;
  const size_t start = from > 30 ? from - 30 : 0;
  return (start > 0 ? "..." : "") + v.substr(start, 60) + (start + 60 < v.size() ? "..." : "");
}

// "key: rank 0 has A, this rank has B; ..." for every setting that differs (empty when none).
std::string setting_differences(const Settings& root, const Settings& mine) {
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

void check_global_batch(int64_t batch_size, int world_size, const std::string& what, const std::string& processes) {
  if (batch_size % world_size == 0) return;
  throw ConfigError(what + " " + std::to_string(batch_size) + " is the global batch and must split evenly over " +
                    processes + " (use a multiple of " + std::to_string(world_size) + ")");
}

DataParallel::DataParallel(std::shared_ptr<distributed::ProcessGroup> group, data::BatchIterator& train,
                           data::BatchIterator* validation)
    : group_(std::move(group)), train_(train), validation_(validation) {}

DataParallel::~DataParallel() {
  reducer_.reset();
  try {
    train_.shard(0, 1);
    if (validation_) validation_->shard(0, 1);
  } catch (...) {  // shard(0, 1) is always valid
  }
}

int DataParallel::rank() const { return group_->rank(); }
int DataParallel::world_size() const { return group_->world_size(); }

// Every rank compares its settings with rank 0's before any step; all ranks fail together, each naming
// what differs on it (rank 0: which ranks differ).
void DataParallel::check_ranks_agree(Trainer& trainer, const data::StreamConfig& data, const FitOptions& opt,
                                     int64_t steps) {
  const auto mine = rank_settings(trainer, train_, data, opt, steps);
  const std::string root_text = group_->broadcast_text(nlohmann::json(mine).dump(), 0);
  const std::string differences = setting_differences(nlohmann::json::parse(root_text).get<Settings>(), mine);
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

void DataParallel::start(Trainer& trainer, const data::StreamConfig& data, const FitOptions& options, int64_t steps) {
  check_ranks_agree(trainer, data, options, steps);
  const int rank = group_->rank(), world = group_->world_size();
  train_.shard(rank, world);
  if (validation_) validation_->shard(rank, world);
  // Rank 0's weights (fresh, or the resumed checkpoint's) on every rank.
  Model& model = trainer.model();
  std::vector<at::Tensor> state = model->parameters();
  for (const auto& b : model->buffers()) state.push_back(b);
  {
    at::NoGradGuard no_grad;
    group_->broadcast(state, 0);
  }
  distributed::GradientReducerOptions reducer_options;
  reducer_options.compression =
      distributed::parse_gradient_compression(options.gradient_compression(), "fit: gradient_compression");
  reducer_ = std::make_shared<distributed::GradientReducer>(group_, model->parameters(), reducer_options);
  // Dropout: a random stream per rank, derived from the shared state (the same on every run).
  {
    auto gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    const uint64_t base = at::check_generator<at::CPUGeneratorImpl>(gen)->random64();
    gen.set_current_seed(base ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(rank + 1)));
  }
  torchfit::logger().info(
      "data-parallel: rank {} of {} ({}), global batch {} = {} per rank, {} gradient buckets ({:.1f} MB, sent as {})",
      rank, world, group_->backend(), train_.batch_size(), train_.batch_size() / world, reducer_->buckets(),
      static_cast<double>(reducer_->bytes()) / 1e6,
      options.gradient_compression() == "none" ? "float32" : options.gradient_compression());
}

void DataParallel::zero_grad() { reducer_->zero_grad(); }

double DataParallel::finish_gradients() { return reducer_->finish(); }

double DataParallel::loss_share(int64_t shard, int64_t global) {
  return global > 0 ? static_cast<double>(shard) / static_cast<double>(global) : 1.0;
}

void DataParallel::reduce_step(double& loss, std::vector<double>& sums, int64_t& n, double& allreduce_ms) {
  const double t0 = detail::steady_ms();
  const int own_signal = runtime::interrupt_signal();
  std::vector<double> v = {loss * static_cast<double>(n), static_cast<double>(n), own_signal != 0 ? 1.0 : 0.0,
                           static_cast<double>(own_signal)};
  v.insert(v.end(), sums.begin(), sums.end());
  v = group_->allreduce_sum(v);
  n = std::llround(v[1]);
  loss = v[1] > 0 ? v[0] / v[1] : 0.0;
  interrupted_ = v[2] > 0;
  // A rank stopped by a peer takes the peer's signal: the mean of the interrupted ranks' signals, exact when
  // they agree (torchrun forwards one SIGTERM to all), else SIGINT's. Its own signal comes first.
  if (interrupted_ && own_signal == 0) {
    const double mean = v[3] / v[2];
    interrupt_signal_ = std::fabs(mean - std::round(mean)) < 1e-9 ? static_cast<int>(std::lround(mean)) : SIGINT;
  } else if (interrupted_) {
    interrupt_signal_ = own_signal;
  }
  std::copy(v.begin() + 4, v.end(), sums.begin());
  allreduce_ms += detail::steady_ms() - t0;
}

void DataParallel::reduce_sums(double& loss_sum, int64_t& seen, std::vector<double>& metric_sums) {
  std::vector<double> v = {loss_sum, static_cast<double>(seen)};
  v.insert(v.end(), metric_sums.begin(), metric_sums.end());
  v = group_->allreduce_sum(v);
  loss_sum = v[0];
  seen = std::llround(v[1]);
  std::copy(v.begin() + 2, v.end(), metric_sums.begin());
}

nlohmann::json DataParallel::info() const {
  nlohmann::json info = {
      {"world_size", group_->world_size()}, {"backend", group_->backend()}, {"timeout_s", group_->timeout().count()}};
  if (reducer_) {
    info.update({{"gradient_buckets", reducer_->buckets()},
                 {"gradient_bytes", reducer_->bytes()},
                 {"gradient_compression", distributed::to_string(reducer_->compression())},
                 {"gradient_wire_bytes", reducer_->wire_bytes()}});
  }
  return info;
}

}  // namespace torchfit
