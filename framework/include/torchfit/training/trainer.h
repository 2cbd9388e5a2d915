#pragma once
/// @file trainer.h
/// Trainer — compile/fit/evaluate/predict for a Sequential model (keras.Model's training API).
#include <c10/core/Device.h>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/arg.h>
#include <torch/optim/optimizer.h>

#include <torchfit/data/batch_iterator.h>
#include <torchfit/model/compile.h>
#include <torchfit/model/sequential.h>
#include <torchfit/training/callbacks.h>
#include <torchfit/training/history.h>
#include <torchfit/training/progbar.h>

namespace torchfit {

/// Arguments of fit(), with Keras defaults.
struct FitOptions {
  using IteratorPtr = data::BatchIterator*;
  using StreamPtr = std::ostream*;

  /// Epochs to run up to (Keras: the index of the last epoch, counted from initial_epoch).
  TORCH_ARG(int, epochs) = 1;
  /// Batches per epoch; 0 ⇒ one pass over the data (ceil(samples / batch_size)).
  TORCH_ARG(int64_t, steps_per_epoch) = 0;
  /// Validation source (never augmented); nullptr ⇒ no validation.
  TORCH_ARG(IteratorPtr, validation_data) = nullptr;
  /// Validation batches at each epoch end; 0 ⇒ one full pass (every image).
  TORCH_ARG(int64_t, validation_steps) = 0;
  TORCH_ARG(std::vector<std::shared_ptr<Callback>>, callbacks) = {};
  /// 0 silent, 1 progress bar, 2 one line per epoch.
  TORCH_ARG(int, verbose) = 1;
  /// Epoch to start at (0-based; for resuming).
  TORCH_ARG(int, initial_epoch) = 0;
  /// Steps of `initial_epoch` already done, 0..steps_per_epoch (resuming mid-epoch: the epoch runs the
  /// remaining steps; its running means cover those steps only). steps_per_epoch (a checkpoint taken
  /// after the epoch's last step) runs no step and finishes the epoch: validation, callbacks; its
  /// training loss and metrics are then nan.
  TORCH_ARG(int64_t, initial_step) = 0;
  /// Directory for steps.csv, epochs.csv and run.json ("" ⇒ no files).
  TORCH_ARG(std::string, run_dir) = "";
  /// Steps at the start of the run reported as warm-up (excluded from the epoch timing statistics).
  TORCH_ARG(int64_t, warmup_steps) = 2;
  /// Stop with an error naming epoch and step when the loss is NaN/inf (default on).
  TORCH_ARG(bool, terminate_on_nan) = true;
  /// Extra fields for run.json (e.g. the app's arguments).
  TORCH_ARG(nlohmann::json, run_info) = nlohmann::json::object();
  /// Where the progress line goes (default std::cout); `dynamic` forces/blocks '\r' updates.
  TORCH_ARG(StreamPtr, out) = nullptr;
  TORCH_ARG(std::optional<bool>, dynamic) = std::nullopt;
  /// Clock for the progress line (seconds); default steady_clock.
  TORCH_ARG(Progbar::Clock, clock) = {};
};

/// Timing of one training step, in milliseconds. On CUDA each clock read follows a synchronisation.
struct StepTiming {
  int epoch = 0;          ///< 1-based
  int64_t step = 0;       ///< 1-based within the epoch
  double data_ms = 0;     ///< blocked waiting on the prefetch queue
  double h2d_ms = 0;      ///< host → device copy
  double compute_ms = 0;  ///< forward + loss + backward + optimizer step
  double step_ms = 0;     ///< whole step, including metrics bookkeeping
  bool warmup = false;
};

/// Where a run stands: what a checkpoint records so that a resumed run continues exactly.
struct TrainingPosition {
  int epoch = 0;              ///< epochs completed
  int64_t step = 0;           ///< steps completed within epoch `epoch + 1` (0 at an epoch boundary)
  int64_t train_batches = 0;  ///< batches taken from the training source since the run began
  int64_t val_batches = 0;    ///< batches taken from the validation source (validation_steps > 0)
};

/// A Sequential model compiled with a loss, an optimizer and metrics (keras Model.compile/fit/…).
///
/// The model is moved to `device` at construction; batches are copied there per step.
/// Errors: ConfigError for unknown loss/optimizer/metric names or an invalid learning rate.
class Trainer {
 public:
  Trainer(Sequential model, CompileOptions options, c10::Device device = c10::Device(c10::kCPU));

  /// Trains for epochs × steps; returns the per-epoch History. Writes steps.csv, epochs.csv and run.json
  /// in run_dir when set. Errors: torchfit::Error on a non-finite loss (naming epoch and step), on an
  /// unwritable run_dir (before the first step), or what the data source throws.
  History fit(data::BatchIterator& train, const FitOptions& options = {});

  /// Loss and metrics over `steps` batches (0 ⇒ one full pass: every sample, partial last batch
  /// included), weighted by batch size; eval mode, no autograd. Keys: "loss" and the metric names.
  Logs evaluate(data::BatchIterator& data, int64_t steps = 0);

  /// Model outputs (probabilities (N, K) for a softmax model) for `steps` batches (0 ⇒ one pass), rows in
  /// the source's order; when `indices` is given it receives each row's sample index (filenames()[i]).
  at::Tensor predict(data::BatchIterator& data, int64_t steps = 0, std::vector<int64_t>* indices = nullptr);
  /// Model outputs for a tensor batch (N, C, H, W).
  at::Tensor predict(const at::Tensor& x);

  /// One optimisation step on a batch already on the device; returns the loss (a graph-free scalar)
  /// and accumulates metric sums into `metric_sums`.
  double train_step(const at::Tensor& x, const at::Tensor& y, std::vector<double>* metric_sums = nullptr);

  Sequential& model() { return model_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  const CompileOptions& compile_options() const { return options_; }
  const c10::Device& device() const { return device_; }
  /// Metric names as the user gave them (printed names).
  const std::vector<std::string>& metric_names() const { return metric_names_; }

  double learning_rate() const;
  void set_learning_rate(double lr);

  /// Set by a callback (EarlyStopping) to end fit() after the current epoch.
  bool stop_training = false;

  /// Timings of every step of the last fit() (including warm-up steps, flagged).
  const std::vector<StepTiming>& step_timings() const { return timings_; }
  /// Position reached by the last (or current) fit(); set_position() for a resumed run.
  const TrainingPosition& position() const { return position_; }
  void set_position(const TrainingPosition& p) { position_ = p; }
  /// True when the last fit() stopped early because runtime::interrupt_requested() (Ctrl-C).
  bool interrupted() const { return interrupted_; }

 private:
  std::pair<at::Tensor, at::Tensor> to_device(const data::Batch& batch) const;
  at::Tensor model_output(const at::Tensor& x);  // logits when the loss uses them
  Sequential model_;
  CompileOptions options_;
  c10::Device device_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::vector<std::string> metric_names_;
  std::vector<std::string> resolved_metrics_;
  bool from_logits_ = false;
  std::vector<StepTiming> timings_;
  TrainingPosition position_;
  bool interrupted_ = false;
};

/// The q-quantile (0 ≤ q ≤ 1) of `values`, linearly interpolated between order statistics (numpy's
/// default) — the definition behind epochs.csv's median/p90 and every timing summary; 0 when empty.
double percentile(std::vector<double> values, double q);

/// Builds the optimizer of `options` over `params`. Errors: ConfigError for an unknown name or lr ≤ 0.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        std::vector<at::Tensor> params);

}  // namespace torchfit
