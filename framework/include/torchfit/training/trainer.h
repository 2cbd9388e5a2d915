#pragma once
/// @file trainer.h
/// Trainer — compile/fit/evaluate/predict for a Model, Sequential or functional (keras.Model's training API).
#include <c10/core/Device.h>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/arg.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <torchfit/data/arrays.h>
#include <torchfit/data/batch_iterator.h>
#include <torchfit/model/compile.h>
#include <torchfit/model/model.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/callback.h>
#include <torchfit/training/compiled_outputs.h>
#include <torchfit/training/history.h>
#include <torchfit/training/loss_scale_optimizer.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/optimizer_features.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/progbar.h>
#include <torchfit/training/timing.h>

namespace torchfit {

namespace distributed {
class ProcessGroup;
}  // namespace distributed
class DataParallel;
namespace detail {
class DevicePrefetcher;
struct DeviceBatch;
}  // namespace detail

using saving::TrainingPosition;

/// Arguments of fit(), with Keras defaults.
struct FitOptions {
  using IteratorPtr = data::BatchIterator*;
  using ClassWeights = std::map<int64_t, double>;
  using StreamPtr = std::ostream*;

  /// Epochs to run up to (Keras: the index of the last epoch, counted from initial_epoch).
  TORCH_ARG(int, epochs) = 1;
  /// Batches per epoch; 0 ⇒ one pass over the data (ceil(samples / batch_size)).
  TORCH_ARG(int64_t, steps_per_epoch) = 0;
  /// Validation source (never augmented); nullptr ⇒ no validation. Batches with sample weights give a
  /// weighted val_loss (Keras); class_weight does not apply to it.
  TORCH_ARG(IteratorPtr, validation_data) = nullptr;
  /// Keras's validation_split: the LAST fraction of the training source's samples, in (0, 1), validates —
  /// taken before shuffling (BatchIterator::train_validation_split; the training part keeps the source's
  /// shuffling). 0 ⇒ none. Ignored, with a log line, when validation_data is given (Keras: validation_data
  /// overrides it). Errors: ConfigError for a value outside [0, 1), a source that cannot split (only
  /// in-memory arrays do, as in Keras), or too few samples for both parts.
  TORCH_ARG(double, validation_split) = 0.0;
  /// Validation batches at each epoch end; 0 ⇒ one full pass (every image).
  TORCH_ARG(int64_t, validation_steps) = 0;
  /// Called in order after fit()'s own ProgbarLogger and RunLogger (callback.h documents the hooks).
  TORCH_ARG(std::vector<CallbackPtr>, callbacks) = {};
  /// 0 silent, 1 progress bar, 2 one line per epoch.
  TORCH_ARG(int, verbose) = 1;
  /// Epoch to start at (0-based; for resuming).
  TORCH_ARG(int, initial_epoch) = 0;
  /// Steps of `initial_epoch` already done, 0..steps_per_epoch (resuming mid-epoch: the epoch runs the
  /// remaining steps; its running means cover those steps only). steps_per_epoch (a checkpoint taken
  /// after the epoch's last step) runs no step and finishes the epoch: validation, callbacks; its
  /// training loss and metrics are then nan.
  TORCH_ARG(int64_t, initial_step) = 0;
  /// Continue the run saved in this checkpoint exactly ("" ⇒ start afresh): loads weights, optimizer
  /// state and learning rate, the random-number state and the position, skips the batches the saved run
  /// took from `train` and `validation_data` (same seed ⇒ the same next batches), and sets initial_epoch
  /// and initial_step from the position (training/resume.h). Errors: IoError/ConfigError naming the
  /// checkpoint (unreadable, another model, other classes than the training source, a step beyond
  /// steps_per_epoch) and ConfigError listing every stream setting of `train` that differs from the saved
  /// run's (seed, batch size, samples, target size, augmentation, ...: the resumed run would not continue
  /// exactly).
  TORCH_ARG(std::string, resume_from) = "";
  /// The same from a checkpoint already read (saving::Checkpoint::read; the file is not read again), e.g.
  /// the one the model was built from. ConfigError when resume_from is set too.
  TORCH_ARG(std::shared_ptr<const saving::Checkpoint>, resume_checkpoint) = nullptr;
  /// With resume_from: replaces the checkpoint's learning rate by this one (logged "learning rate A → B");
  /// unset ⇒ the saved learning rate continues.
  TORCH_ARG(std::optional<double>, resume_learning_rate) = std::nullopt;
  /// Steps at the start of the run reported as warm-up (excluded from the timing statistics).
  TORCH_ARG(int64_t, warmup_steps) = 2;
  /// Stop with an error naming epoch and step when the loss is NaN/inf (default on).
  TORCH_ARG(bool, terminate_on_nan) = true;
  /// Where the progress line goes (default std::cout); `dynamic` forces/blocks '\r' updates.
  TORCH_ARG(StreamPtr, out) = nullptr;
  TORCH_ARG(std::optional<bool>, dynamic) = std::nullopt;
  /// Clock for the progress line (seconds); default steady_clock.
  TORCH_ARG(Progbar::Clock, clock) = {};
  /// Data-parallel training over this group (distributed/process_group.h; nullptr ⇒ one process), with
  /// tf.distribute's semantics: the training source's batch size is the global batch, split evenly over
  /// the ranks (ConfigError when it does not divide); each rank reads its shard of every batch
  /// (BatchIterator::shard, also for validation_data); rank 0's weights are broadcast at the start
  /// (after resume_from, which every rank loads: same world size only); gradients are averaged by
  /// bucketed asynchronous allreduce during backward (GradientReducer); the logged loss and metrics are
  /// the global ones; callbacks that print or write files run on rank 0 only (Callback::chief_only).
  /// Every rank must call fit with the same options. BatchNormalization statistics stay per rank.
  TORCH_ARG(std::shared_ptr<distributed::ProcessGroup>, process_group) = nullptr;
  /// How a data-parallel fit sends its gradients: "none" (float32), "bf16" or "fp16" (PyTorch DDP's
  /// bf16/fp16_compress_hook: half the bytes, summed in float32; distributed/gradient_reducer.h
  /// GradientCompression). Ignored in one process. Errors: ConfigError for another name.
  TORCH_ARG(std::string, gradient_compression) = "none";
  /// Keras `class_weight`: class index → weight, for every class of the model's output (training/class_weight.h
  /// gives scikit-learn's "balanced" weights). It becomes each training sample's sample weight, its class's
  /// weight (Keras 3's class_weight_to_sample_weights; losses.h class_sample_weight): the loss is Σ w·loss /
  /// batch size; the reported training loss is that weighted loss; metrics and validation are unweighted
  /// (as Keras's `metrics`). Empty ⇒ no weights. Errors: ConfigError for a missing class, an index outside
  /// the output, a weight that is not a finite number ≥ 0, or training batches that carry sample weights
  /// too (Keras 3: "You cannot `class_weight` and `sample_weight` at the same time").
  TORCH_ARG(ClassWeights, class_weight) = {};

 public:
  /// Whether fit() continues a saved run (resume_from or resume_checkpoint set).
  bool resumes() const { return !resume_from_.empty() || resume_checkpoint_ != nullptr; }
};

/// fit/evaluate/predict's arguments for in-memory arrays (Keras Model.fit(x, y, batch_size=…, shuffle=…,
/// validation_data=(x, y, sample_weight))); the rest is FitOptions (epochs, validation_split, class_weight, …).
struct ArrayOptions {
  /// Samples per batch (Keras's default 32); the last batch of a pass is partial.
  TORCH_ARG(int64_t, batch_size) = 32;
  /// A new random order of the training samples every epoch (Keras's default true); the validation part
  /// of validation_split is taken before and never shuffled.
  TORCH_ARG(bool, shuffle) = true;
  /// Seed of the shuffling (the same seed, the same batches).
  TORCH_ARG(uint64_t, seed) = 0;
  /// Keras's validation_data=(x_val, y_val[, val_sample_weight]); it overrides FitOptions::validation_split.
  TORCH_ARG(std::optional<data::Arrays>, validation_data) = std::nullopt;
};

/// A Model (Sequential or functional) compiled with a loss, an optimizer and metrics (keras Model.compile/fit/…).
///
/// The model is moved to `device` at construction; batches are copied there per step (CUDA: the next
/// batch of the epoch is taken from the source and copied on a side stream while the current step computes
/// — asynchronous when the source's batches are in pinned memory — and cuDNN's algorithm search
/// (benchmark mode) is on, the shapes being fixed). The model's dtype
/// policy (ModelImpl::dtype_policy, mixed_precision.h) is read at construction: checked against the
/// device (mixed_float16 on the CPU is refused; mixed_bfloat16 where it is slower is warned about), and
/// mixed_float16 (or CompileOptions::loss_scale) adds dynamic loss scaling (LossScaleOptimizer).
/// Errors: ConfigError for unknown loss/optimizer/metric names, an invalid learning rate, a dtype policy
/// the device cannot run, or invalid loss-scaling settings.
class Trainer {
 public:
  Trainer(Model model, CompileOptions options, c10::Device device = c10::Device(c10::kCPU));
  virtual ~Trainer();
  Trainer(Trainer&&) = default;
  Trainer& operator=(Trainer&&) = default;

  /// Trains for epochs × steps; returns the per-epoch History. Everything it reports goes through
  /// callbacks, called in this order: ProgbarLogger (verbose > 0), the options' callbacks (a RunLogger
  /// writes steps.csv, epochs.csv and run.json), HistoryRecorder. Errors: torchfit::Error on a non-finite loss (naming
  /// epoch and step), ConfigError for bad options, IoError for an unwritable RunLogger folder (before the first step),
  /// or what the data source or a callback throws (after on_train_error).
  History fit(data::BatchIterator& train, const FitOptions& options = {});

  /// Keras's fit(x, y, sample_weight=…) on in-memory arrays (data/arrays.h; x (N, ...) in LibTorch's
  /// order): the arrays are checked and floating-point ones cast to float32 (data::standardize_arrays), then
  /// trained as a TensorIterator with `arrays`' batch size, shuffling and seed — validation_split and
  /// class_weight as FitOptions says, validation_data from `arrays` (weighted by its sample weights).
  /// Errors: ConfigError for arrays of different lengths (naming them), batch_size <= 0, validation_data
  /// given both here and in `options`, class_weight with sample weights, and fit()'s errors.
  History fit(const data::Arrays& data, const FitOptions& options = {}, const ArrayOptions& arrays = {});

  /// Loss and metrics over `steps` batches (0 ⇒ one full pass: every sample, partial last batch
  /// included), weighted by batch size; eval mode, no autograd. The loss weighs each sample by its batch's
  /// sample_weight when it has one (Keras). Keys: "loss" and the metric names.
  Logs evaluate(data::BatchIterator& data, int64_t steps = 0);
  /// evaluate on in-memory arrays (x, y[, sample_weight]) in batches of `batch_size` (Keras's default 32).
  /// Errors: as fit(Arrays).
  Logs evaluate(const data::Arrays& data, int64_t batch_size = 32);

  /// Model outputs (probabilities (N, K) for a softmax model) for `steps` batches (0 ⇒ one pass); see
  /// torchfit::predict (training/predict.h), which needs no optimizer.
  at::Tensor predict(data::BatchIterator& data, int64_t steps = 0, std::vector<int64_t>* indices = nullptr);
  /// Model outputs for a tensor batch (N, C, H, W).
  at::Tensor predict(const at::Tensor& x);
  /// Every output of a model with one or several inputs and outputs (Keras's predict returning a list), for
  /// `steps` batches of `data` (0 ⇒ one pass); training/predict.h predict_outputs.
  std::vector<at::Tensor> predict_outputs(data::BatchIterator& data, int64_t steps = 0,
                                          std::vector<int64_t>* indices = nullptr);
  /// Every output for in-memory inputs (Arrays' x and more_x; targets ignored) in batches of `batch_size`.
  std::vector<at::Tensor> predict_outputs(const data::Arrays& x, int64_t batch_size = 32);
  /// Model outputs for in-memory inputs x (N, ...) in batches of `batch_size` (Keras predict(x, batch_size)).
  at::Tensor predict(const at::Tensor& x, int64_t batch_size);

  /// One optimisation step on a batch already on the device; returns the loss (a graph-free scalar)
  /// and adds the batch's metric statistics (MetricSet::update; size metrics().state_size()) to `metric_sums`. With
  /// loss scaling a step whose gradients are not finite is skipped (loss_scale_optimizer()->skipped_steps() counts
  /// them).
  double train_step(const at::Tensor& x, const at::Tensor& y, std::vector<double>* metric_sums = nullptr);
  /// The same with Keras's sample weights (N) for the loss (losses.h compute_loss; undefined = none).
  double train_step(const at::Tensor& x, const at::Tensor& y, const at::Tensor& sample_weight,
                    std::vector<double>* metric_sums = nullptr);

  /// Keras 3's "customizing what happens in fit()": the step fit() runs on each training batch (on the
  /// training device; inputs Batch::inputs(), targets Batch::targets()). A subclass overrides it to compute
  /// its own losses — with call_model, compiled_loss and minimize below, or its own autograd and optimizers —
  /// and returns the batch's values by name: "loss" (required: the progress line's first value) and the
  /// names step_names() lists. fit() keeps everything else: the progress line, callbacks (History,
  /// EarlyStopping on any returned name, ModelCheckpoint), run files, checkpoints and exact resume; each
  /// epoch's value of a name is the mean of its batch values weighted by the batch sizes (Keras's Mean
  /// trackers). Default: the compiled step (each output's loss and weight, the regularization losses, one
  /// optimizer update, the compiled metrics). Errors: ConfigError when an override returns no "loss".
  /// In a data-parallel run the loss and the step_names() values are averaged over the ranks, each rank's
  /// value weighted by its shard's samples (as for one process, when a value is a mean over the batch).
  virtual Logs train_step(const data::Batch& batch);
  /// The step evaluate() (and fit's validation) runs on each batch, in eval mode without autograd; as
  /// train_step, "loss" required. Default: the compiled losses and metrics.
  virtual Logs test_step(const data::Batch& batch);
  /// The names besides "loss" an overridden train_step/test_step returns, in the order the progress line
  /// and the run files show them; empty (default) = the compiled metric names (metric_names()).
  virtual std::vector<std::string> step_names() const { return {}; }
  /// The variables of a custom step's own (a second model, a second optimizer's state, a counter), as
  /// Keras 3 tracks the attributes of a subclassed model (Layer.save_own_variables /
  /// load_own_variables, with a LibTorch archive as the store): save_own_variables writes them into every
  /// checkpoint (save_checkpoint, ModelCheckpoint, the interrupt checkpoint), load_own_variables reads them
  /// back in load_checkpoint and FitOptions::resume_from — only when the checkpoint has them (one written
  /// by this version of torchfit). E.g. `critic_->save(store)` and `critic_optimizer_->save(archive)`
  /// written as sub-archives. Default: nothing.
  virtual void save_own_variables(torch::serialize::OutputArchive& store) const { (void)store; }
  virtual void load_own_variables(torch::serialize::InputArchive& store) { (void)store; }

  /// Saves model, optimizer, position and `class_indices` (saving::save_checkpoint). Errors: IoError.
  void save_checkpoint(const std::string& path, const std::map<std::string, int64_t>& class_indices = {});
  /// Loads weights, the optimizer's state and learning rate (when `load_optimizer` and the saved
  /// optimizer has this one's name), the RNG state and the position (saving::load_checkpoint).
  saving::CheckpointInfo load_checkpoint(const std::string& path, bool load_optimizer = true);
  /// The same from a checkpoint already read.
  saving::CheckpointInfo load_checkpoint(const saving::Checkpoint& checkpoint, bool load_optimizer = true);

  Model& model() { return model_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  /// The loss scaling around optimizer() (mixed_float16 or CompileOptions::loss_scale), else nullptr.
  LossScaleOptimizer* loss_scale_optimizer() { return loss_scaler_.get(); }
  const LossScaleOptimizer* loss_scale_optimizer() const { return loss_scaler_.get(); }
  const CompileOptions& compile_options() const { return options_; }
  /// The preprocessing the last fit's training source gave its images outside the model
  /// (BatchIterator::preprocessing: {"rescale", …}), as checkpoints record it; null before fit.
  const nlohmann::json& preprocessing() const { return preprocessing_; }
  const c10::Device& device() const { return device_; }
  /// The log names besides "loss": step_names() of a custom step, else CompiledOutputs::names (for one
  /// output the metric names as MetricSet
  /// gives them — a name as the user gave it, a metric object's Keras name, name_i for each element of a
  /// vector value; for several outputs "<output>_<metric>" and "<output>_loss").
  const std::vector<std::string>& metric_names() const {
    return custom_names_.empty() ? outputs_->names() : custom_names_;
  }
  /// The compiled metrics of the first (or only) output (statistics and values).
  const MetricSet& metrics() const { return outputs_->metrics(0); }
  /// compile()'s losses, weights and metrics per output.
  const CompiledOutputs& compiled_outputs() const { return *outputs_; }

  double learning_rate() const;
  /// Errors: ConfigError unless lr is a finite number > 0, or when the optimizer follows a learning-rate
  /// schedule (Keras: "this optimizer was created with a LearningRateSchedule ... not settable").
  void set_learning_rate(double lr);
  /// The optimizer's Keras features around optimizer(): accumulation, clipping, weight decay, schedule,
  /// EMA (optimizer_features.h). With use_ema, fit() ends (not when interrupted) by copying the averages
  /// into the model's weights; checkpoints written during fit hold the raw weights and the averages.
  const OptimizerFeatures& optimizer_features() const { return *features_; }
  /// The class weights of the current (or last) fit(), one per class; empty without class_weight.
  const std::vector<double>& class_weight() const { return class_weight_values_; }

  /// Set by a callback (EarlyStopping) to end fit() after the current epoch.
  bool stop_training = false;

  /// Timings of every step of the last (or current) fit(), warm-up steps included and flagged.
  const std::vector<StepTiming>& step_timings() const { return timings_; }
  /// Position reached by the last (or current) fit(); set_position() for a resumed run.
  const TrainingPosition& position() const { return position_; }
  void set_position(const TrainingPosition& p) { position_ = p; }
  /// True when the last fit() stopped early because runtime::interrupt_requested() (Ctrl-C; in a
  /// data-parallel run, on any rank: the ranks stop at the same step).
  bool interrupted() const { return interrupted_; }
  /// The signal that stopped the last fit() (SIGINT, SIGTERM, SIGHUP: runtime/interrupt.h; in a
  /// data-parallel run the interrupted peer's when this rank got none); 0 when it was not interrupted.
  int interrupt_signal() const { return interrupt_signal_; }

  /// Data-parallel fit(): this process's rank and the number of processes (0 and 1 otherwise).
  int rank() const;
  int world_size() const;
  /// {"world_size", "backend", "timeout_s", "gradient_buckets", "gradient_bytes"} during a data-parallel
  /// fit(); {"world_size": 1} otherwise (RunLogger writes it into run.json).
  nlohmann::json distributed_info() const;

 protected:
  /// For a custom train_step/test_step: the model's outputs for the batch's inputs, one per output, in the
  /// model's current mode — logits where the compiled losses take them (CompiledOutputs::logits()).
  std::vector<at::Tensor> call_model(const data::Batch& batch);
  /// The compiled total loss of `outputs` against the batch's targets and sample weights (Σ weight · loss
  /// per output, the masks, class_weight during fit) plus the model's regularization losses — Keras 3's
  /// compute_loss. Adds the per-output losses to the step's statistics. Errors: as CompiledOutputs.
  at::Tensor compiled_loss(const data::Batch& batch, const std::vector<at::Tensor>& outputs);
  /// Keras's optimizer step on the gradients of `loss`: the gradients reset, backward (through the loss
  /// scaling and the data-parallel share of the global batch), the allreduce, the update through
  /// OptimizerFeatures (accumulation, clipping, EMA). Call once per optimizer step.
  void minimize(const at::Tensor& loss);
  /// Adds the compiled metrics of `outputs` to the step's statistics (the default steps call it).
  void update_metrics(const data::Batch& batch, const std::vector<at::Tensor>& outputs);

 private:
  struct EpochMeans;
  double step_loss(const Logs& values, const char* step) const;
  void pin_sources(data::BatchIterator& train, const FitOptions& opt) const;
  Logs compute_step(const detail::DeviceBatch& batch, std::vector<double>* metric_sums, double loss_scale);
  void reset_gradients();
  History fit_split(data::BatchIterator& train, const FitOptions& options);  // validation_split
  void apply_gradients();  // the optimizer's step, through the loss scaling and OptimizerFeatures
  void set_class_weight(const std::map<int64_t, double>& class_weight);
  at::Tensor training_loss(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& ys,
                           const at::Tensor& sample_weight, std::vector<double>* state) const;
  FitParams fit_params(data::BatchIterator& train, FitOptions& opt);
  std::vector<CallbackPtr> fit_callbacks(const FitOptions& opt, const CallbackPtr& history) const;
  Logs train_epoch(data::BatchIterator& train, int epoch, int64_t first_step, const FitOptions& opt,
                   const FitParams& params, CallbackList& callbacks);
  Logs run_step(data::BatchIterator& train, StepTiming& timing, EpochMeans& means, bool prefetch_next);
  void validate(const FitOptions& opt, Logs& logs);
  bool interrupt_agreed() const;  // Ctrl-C here, or (data-parallel) on any rank at the last step
  detail::DeviceBatch to_device(const data::Batch& batch) const;
  std::vector<at::Tensor> model_outputs(const std::vector<at::Tensor>& xs);  // logits when the losses use them
  Model model_;
  CompileOptions options_;
  c10::Device device_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<LossScaleOptimizer> loss_scaler_;
  std::unique_ptr<OptimizerFeatures> features_;
  at::Tensor class_weight_;  // (K) during a fit() with class_weight, else undefined
  std::vector<double> class_weight_values_;
  nlohmann::json preprocessing_;  // the training source's (BatchIterator::preprocessing), saved in checkpoints
  std::shared_ptr<detail::DevicePrefetcher> prefetcher_;  // CUDA: the next batch's copy overlaps the step
  std::shared_ptr<CompiledOutputs> outputs_;              // losses, weights and metrics per output
  std::vector<std::string> custom_names_;                 // step_names() of a custom step (set by fit and evaluate)
  std::vector<double>* step_sums_ = nullptr;              // the running step's metric statistics (default steps)
  double step_share_ = 1.0;                               // the running step's data-parallel share of the loss
  bool evaluating_ = false;                               // inside evaluate(): no class weights in compiled_loss
  std::vector<StepTiming> timings_;
  TrainingPosition position_;
  bool interrupted_ = false;
  int interrupt_signal_ = 0;
  std::shared_ptr<DataParallel> data_parallel_;  // during a data-parallel fit() only
  double last_allreduce_ms_ = 0;                 // the last step's wait for the gradient allreduce
};

}  // namespace torchfit
