#include "train.h"

#include <torchfit/runtime/logging.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/distributed/process_group.h>
#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/matmul.h>
#include <torchfit/runtime/process.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/data_parallel.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/tensorboard.h>
#include <torchfit/training/trainer.h>

#include "../common/cli.h"
#include "keras_options.h"
#include "model_config.h"

namespace fs = std::filesystem;
using namespace torchfit;

namespace train_cnn {
namespace {

struct Sources {
  std::unique_ptr<data::DirectoryIterator> train, test;
  std::map<int64_t, double> class_weight;  ///< --class-weight, read once the data is found
};

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

// The article's generators: augmentation for training, rescale only for test. `chief`: print the
// "Found" lines (rank 0 of a data-parallel run, or the only process).
Sources make_sources(const Args& a, bool chief) {
  const fs::path train_dir = fs::path(a.data) / "train", test_dir = fs::path(a.data) / "test";
  data::ImageDataGenerator train_gen(a.no_augment ? data::ImageDataGeneratorOptions().rescale(a.rescale)
                                                  : data::article_augmentation().rescale(a.rescale));
  data::ImageDataGenerator test_gen(data::ImageDataGeneratorOptions().rescale(a.rescale));
  auto flow = data::FlowOptions()
                  .target_size({a.target_size, a.target_size})
                  .batch_size(a.batch_size)
                  .class_mode("categorical")
                  .seed(a.seed)
                  .workers(a.workers)
                  .max_image_pixels(a.max_image_pixels)
                  .sixteen_bit(a.sixteen_bit)
                  .cache(a.cache)
                  .cache_max_bytes(a.cache_max_mib << 20)
                  .verbose(chief);
  Sources s;
  s.train = train_gen.flow_from_directory(train_dir.string(), flow);
  if (s.train->num_classes() < 2) {
    torchfit::logger().warn("'{}' has {} class folder(s): a softmax over one class always predicts it (loss 0)",
                            train_dir.string(), s.train->num_classes());
  }
  std::error_code ec;
  if (fs::is_directory(test_dir, ec)) {
    s.test = test_gen.flow_from_directory(
        test_dir.string(), data::FlowOptions(flow).shuffle(true).class_indices(s.train->class_indices()));
  } else {
    torchfit::logger().warn("no test/ folder in '{}': training without validation", a.data);
  }
  return s;
}

// --load-model: a checkpoint's or Keras file's model with its weights; its input and classes must fit the data.
Model loaded_model(const Args& a, int64_t classes) {
  Model model = saving::load_checkpoint_or_keras(a.load_model);
  const auto& in = model->input_shape();
  if (in != Shape{a.target_size, a.target_size, 3}) {
    throw apps::UsageError("--load-model '" + a.load_model + "' takes inputs " + format_shape(in) +
                           "; train_cnn feeds (" + std::to_string(a.target_size) + ", " +
                           std::to_string(a.target_size) +
                           ", 3) RGB images (set --target-size to its size; "
                           "a grayscale model cannot be fine-tuned here)");
  }
  if (a.new_head) {
    model = with_new_head(model, classes);
    torchfit::logger().info("--new-head: the classification head is a new Dense({}, softmax) 'new_head'", classes);
  }
  const int64_t outputs = model->output_shape().back();
  if (outputs != classes) {
    throw apps::UsageError("--load-model '" + a.load_model + "' has " + std::to_string(outputs) +
                           " outputs and the data has " + std::to_string(classes) +
                           " classes: add --new-head to replace its classification head");
  }
  if (a.freeze_base) {
    const int frozen = freeze_all_but_head(*model);
    torchfit::logger().info("--freeze-base: {} layers frozen, {} trainable parameters left", frozen,
                            model->trainable_params());
  }
  model->train();
  torchfit::logger().info("starting from the model and weights of '{}' (new optimizer, epoch 0)", a.load_model);
  return model;
}

// The article's CNN, a --model-config architecture, --load-model's model, or the model of `resumed`
// (--resume's checkpoint).
Model make_model(const Args& a, const data::DirectoryIterator& train, const saving::Checkpoint* resumed) {
  at::manual_seed(a.seed);
  if (!a.model_config.empty()) return load_model_config(a.model_config, a.target_size, 3, train.num_classes());
  if (!a.load_model.empty()) return loaded_model(a, train.num_classes());
  if (!resumed) return seed_cnn(a.target_size, train.num_classes(), a.dense2_units);
  Model model = saving::load_model(*resumed);
  const auto& saved = model->input_shape();
  if (saved.size() == 3 && (saved[0] != a.target_size || saved[1] != a.target_size)) {
    throw apps::UsageError("--target-size " + std::to_string(a.target_size) + " does not match the checkpoint '" +
                           a.resume + "', trained at " + std::to_string(saved[0]) + "x" + std::to_string(saved[1]) +
                           " (use --target-size " + std::to_string(saved[0]) + ")");
  }
  return model;
}

// --mixed-precision, or the policy the checkpoint / model config saved (float32 for the article's CNN);
// a flag that changes a saved policy is logged, as --lr is. Checked against the device before training.
void apply_dtype_policy(const Args& a, ModelImpl& model, const c10::Device& device) {
  const std::string saved = model.dtype_policy().name();
  const std::string source = !a.resume.empty()         ? "the checkpoint '" + a.resume + "'"
                             : !a.model_config.empty() ? "the model config '" + a.model_config + "'"
                                                       : "";
  if (!a.mixed_precision.empty() && a.mixed_precision != saved) {
    if (!source.empty())
      torchfit::logger().info("dtype policy {} (from {}) → {} (--mixed-precision)", saved, source, a.mixed_precision);
    model.set_dtype_policy(a.mixed_precision);
  }
  try {
    mixed_precision::check_supported(model.dtype_policy(), device);
  } catch (const ConfigError& e) {
    const bool from_flag = !a.mixed_precision.empty() || source.empty();
    throw ConfigError((from_flag ? "--mixed-precision: " : "the policy saved in " + source + ": ") +
                      std::string(e.what()) + (from_flag ? "" : " (pass --mixed-precision to choose another)"));
  }
}

// run.json's "arguments": the parsed command line (Args::arguments), with what train_cnn resolved from
// it (the run folder and the checkpoint path, a learning rate that comes from --resume's checkpoint, no
// cache budget without --cache) and the data found.
nlohmann::json run_arguments(const Args& a, const Sources& s) {
  nlohmann::json args = a.arguments;
  args["run_dir"] = a.run_dir;
  args["checkpoint"] = a.no_checkpoint ? std::string() : a.checkpoint;
  if (!a.resume.empty() && !a.lr_given) args["lr"] = "checkpoint's";
  if (!a.cache) args["cache_max_mib"] = nullptr;  // no cache, no budget
  args["train_images"] = s.train->n();
  args["test_images"] = s.test ? s.test->n() : 0;
  args["classes"] = s.train->class_indices();
  return args;
}

// The default run folder, runs/<time>-<device>, created here and now (exclusively: a run started in the
// same second gets <time>-<device>-2, -3, …), so that two runs never share one.
std::string new_run_dir(const c10::Device& device) {
  const std::string base = "runs/" + timestamp() + "-" + (device.is_cuda() ? "cuda" : "cpu");
  std::error_code ec;
  fs::create_directories("runs", ec);
  for (int k = 1;; ++k) {
    const std::string dir = k == 1 ? base : base + "-" + std::to_string(k);
    if (fs::create_directory(dir, ec)) return dir;
    if (ec) throw IoError("cannot create the run folder '" + dir + "': " + ec.message());
  }
}

// True when --run-dir holds the run that wrote the --resume checkpoint: its run.json names that checkpoint,
// or the checkpoint lies in the folder. Its files are then continued, not replaced.
bool resumes_own_run(const Args& a) {
  if (a.resume.empty()) return false;
  std::error_code ec;
  const fs::path ckpt = fs::weakly_canonical(fs::absolute(a.resume), ec);
  const fs::path dir = fs::weakly_canonical(fs::absolute(a.run_dir), ec);
  if (ckpt.parent_path() == dir) return true;
  std::ifstream in(dir / "run.json");
  const auto j = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (!j.is_object() || !j.contains("arguments") || !j["arguments"].is_object()) return false;
  const auto saved = j["arguments"].value("checkpoint", std::string());
  return !saved.empty() && fs::weakly_canonical(fs::absolute(saved), ec) == ckpt;
}

// The folder --checkpoint writes into ("." for a bare file name).
std::string checkpoint_folder(const Args& a) {
  const fs::path dir = fs::path(a.checkpoint).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

// Run folder and checkpoint path: defaults filled in (RunLogger and ModelCheckpoint check at the start of
// fit that their folders can be written; RunLogger locks the run folder). Returns whether the run files
// already in the folder are continued (a resume into the run's own folder).
bool prepare_outputs(Args& a, const c10::Device& device, bool chief) {
  if (a.run_dir.empty()) {
    a.run_dir = chief ? new_run_dir(device) : "runs/" + timestamp() + "-" + (device.is_cuda() ? "cuda" : "cpu");
  }
  if (a.checkpoint.empty()) a.checkpoint = (fs::path(a.run_dir) / "model.ckpt").string();
  if (!a.no_checkpoint) {
    apps::check_output_is_not_input({"--checkpoint", a.checkpoint},
                                    {{"--model-config", a.model_config}, {"--load-model", a.load_model}},
                                    {{"--data", a.data}}, /*new_files_too=*/true);
  }
  // Another live run's folder is refused before anything here warns about or replaces its files.
  RunLogger::check_not_in_use(a.run_dir);
  if (!a.no_checkpoint) RunLogger::check_not_in_use(checkpoint_folder(a));
  std::error_code ec;
  if (!chief || !fs::exists(fs::path(a.run_dir) / "steps.csv", ec)) return false;
  if (resumes_own_run(a)) {
    torchfit::logger().info("--run-dir '{}' holds the run of --resume '{}': its run files are continued", a.run_dir,
                            a.resume);
    return true;
  }
  torchfit::logger().warn("--run-dir '{}' holds an earlier run: its steps.csv, epochs.csv and run.json are replaced",
                          a.run_dir);
  return false;
}

// This device's measured sgemm peak: a 2048×2048 product, the best the BLAS/cuBLAS does here.
double sgemm_peak_gflops(const c10::Device& device) {
  runtime::MatmulBenchOptions mm;
  mm.sizes = {2048};
  mm.naive_max = 0;
  mm.run_cuda = device.is_cuda();
  mm.min_time_s = 0.2;
  double peak = 0;
  for (const auto& row : runtime::run_matmul_bench(mm)) {
    if (row.valid && (row.device == "cpu") == device.is_cpu()) peak = std::max(peak, row.gflops);
  }
  return peak;
}

// The achieved rate as a share of the sgemm peak; "n/a" when the peak measured low (a short, noisy run).
std::string share_of_peak_text(double achieved, double peak, const mixed_precision::Policy& policy) {
  // The peak is float32's: products in bf16/fp16 are not bounded by it.
  if (policy.is_mixed()) return "n/a (" + policy.name() + ": products in 16 bits, beyond the float32 sgemm peak)";
  if (peak <= 0 || achieved > peak) return "n/a (above the measured sgemm peak)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * achieved / peak);
  return buf;
}

// The article's comparison figure and the achieved rate against the sgemm peak; also into run.json. Every
// figure counts the images actually in each batch.
void report_timing(Trainer& trainer, RunLogger& run_logger) {
  const TimingSummary s = summarize_timings(trainer.step_timings());
  if (s.steps == 0) return;
  const c10::Device device = trainer.device();
  const double flops_per_sample = static_cast<double>(trainer.model()->train_flops_per_sample());
  const double achieved = achieved_gflops_per_s(s, flops_per_sample);
  const double peak = sgemm_peak_gflops(device);
  std::printf(
      "Timing on %s (%s): median %.1f ms/step, p90 %.1f ms/step, %.1f images/s, data wait %.1f%% "
      "(%lld timed steps, warm-up excluded)\n",
      device.str().c_str(), trainer.model()->dtype_policy().name().c_str(), s.median_ms, s.p90_ms, s.images_per_s,
      100.0 * s.data_wait_share, static_cast<long long>(s.steps));
  std::printf(
      "Compute: %.1f GFLOP per step, %.1f GFLOP/s achieved = %s of this device's measured sgemm peak (%.1f GFLOP/s)\n",
      flops_per_sample * images_per_step(s) / 1e9, achieved,
      share_of_peak_text(achieved, peak, trainer.model()->dtype_policy()).c_str(), peak);
  run_logger.update({{"achieved_gflops_per_s", achieved},
                     {"sgemm_peak_gflops_per_s", peak},
                     {"share_of_peak", peak > 0 && achieved <= peak && !trainer.model()->dtype_policy().is_mixed()
                                           ? nlohmann::json(achieved / peak)
                                           : nlohmann::json()}});
}

// The real file of the last checkpoint written (the --checkpoint pattern formatted), or why there is none.
std::string checkpoint_line(const ModelCheckpoint* checkpoint) {
  if (!checkpoint) return "none (--no-checkpoint)";
  if (checkpoint->last_saved().empty()) return "none written";
  return checkpoint->last_saved();
}

// 128 + the number of the signal that stopped the run: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP).
int interrupt_status(const Trainer& trainer) {
  return 128 + (trainer.interrupt_signal() ? trainer.interrupt_signal() : 2);
}

// ModelCheckpoint wrote the checkpoint when fit() stopped.
int report_interrupt(const Trainer& trainer, const ModelCheckpoint* checkpoint) {
  const auto& pos = trainer.position();
  const std::string by = " by " + runtime::signal_name(interrupt_status(trainer) - 128);
  if (!checkpoint) {
    std::cout << "Interrupted" << by << " at epoch " << pos.epoch + 1 << ", step " << pos.step
              << " (--no-checkpoint: nothing saved)\n";
    return interrupt_status(trainer);
  }
  std::cout << "Interrupted" << by << " at epoch " << pos.epoch + 1 << ", step " << pos.step;
  if (checkpoint->saved_on_interrupt()) {
    std::cout << ": checkpoint written to " << checkpoint->last_saved() << " (continue with --resume "
              << checkpoint->last_saved() << ")";
  } else {
    std::cout << ": no checkpoint written (weights not finite)";
  }
  std::cout << "\n" << std::flush;
  return interrupt_status(trainer);
}

// Under torchrun (WORLD_SIZE > 1): joins the data-parallel group; nullptr for a single process.
std::shared_ptr<distributed::ProcessGroup> join_group(const Args& a, const std::optional<distributed::Environment>& env,
                                                      const c10::Device& device) {
  if (!env) return nullptr;
  if (env->world_size == 1) {
    torchfit::logger().info("WORLD_SIZE=1: training in this one process (no process group)");
    return nullptr;
  }
  // Known before the rendezvous: no waiting for peers to say it.
  check_global_batch(a.batch_size, env->world_size, "--batch-size",
                     "WORLD_SIZE=" + std::to_string(env->world_size) + " processes");
  distributed::ProcessGroupOptions options;
  options.backend = a.dist_backend;
  options.timeout = std::chrono::seconds(a.dist_timeout);
  options.device = device;
  return distributed::ProcessGroup::create(*env, options);
}

// Under torchrun: cuda:LOCAL_RANK for --device auto/cuda; the cores shared by the processes of this
// machine for --threads 0 and --workers 0.
c10::Device local_device(const Args& a, const std::optional<distributed::Environment>& env) {
  const c10::Device device = runtime::parse_device(a.device);
  if (env && device.is_cuda() && (a.device == "auto" || a.device == "cuda"))
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env->local_rank));
  return device;
}

int share_of_cores(int requested, const std::optional<distributed::Environment>& env) {
  if (requested > 0 || !env || env->local_world_size == 1) return requested;
  return std::max(1, runtime::cpu_cores() / env->local_world_size);
}

// Trains `model` on `s` with the run files and checkpoints of `a`; returns the exit status.
int train(Args& a, Model model, Sources& s, const c10::Device& device,
          const std::shared_ptr<distributed::ProcessGroup>& group,
          const std::shared_ptr<const saving::Checkpoint>& resumed) {
  const bool chief = !group || group->rank() == 0;
  const int64_t updates = a.epochs * a.steps_per_epoch / std::max<int64_t>(1, a.gradient_accumulation_steps);
  Trainer trainer(model, compile_options(a, updates), device);
  const bool append = prepare_outputs(a, trainer.device(), chief);
  auto run_logger = std::make_shared<RunLogger>(
      RunLoggerOptions(a.run_dir)
          .run_info(run_arguments(a, s))
          .append(append)
          .also_lock(a.no_checkpoint ? std::vector<std::string>{} : std::vector<std::string>{checkpoint_folder(a)}));
  std::shared_ptr<ModelCheckpoint> checkpoint;
  std::vector<CallbackPtr> callbacks = {run_logger};
  if (!a.tensorboard.empty()) {
    callbacks.push_back(std::make_shared<TensorBoard>(TensorBoardOptions(a.tensorboard).update_freq(a.update_freq)));
  }
  if (!a.no_checkpoint) {
    checkpoint = std::make_shared<ModelCheckpoint>(ModelCheckpointOptions(a.checkpoint).save_freq(a.checkpoint_every));
    callbacks.push_back(checkpoint);
  }
  runtime::install_interrupt_handler();
  trainer.fit(*s.train, FitOptions()
                            .epochs(a.epochs)
                            .steps_per_epoch(a.steps_per_epoch)
                            .validation_data(s.test.get())
                            .validation_steps(s.test ? a.validation_steps : 0)
                            .callbacks(callbacks)
                            .verbose(a.verbose)
                            .resume_checkpoint(resumed)
                            .resume_learning_rate(a.lr_given ? std::optional<double>(a.lr) : std::nullopt)
                            .warmup_steps(a.warmup_steps)
                            .class_weight(s.class_weight)
                            .process_group(group)
                            .gradient_compression(a.grad_compression));
  if (!chief) return trainer.interrupted() ? interrupt_status(trainer) : 0;  // rank 0 reports and writes
  if (trainer.interrupted()) return report_interrupt(trainer, checkpoint.get());
  if (a.ema && checkpoint && !checkpoint->last_saved().empty()) {
    // fit() ended with the averaged weights (Keras's finalize_variable_values): the last checkpoint
    // takes them, as model.save() after fit would.
    trainer.save_checkpoint(checkpoint->last_saved(), s.train->class_indices());
    std::cout << "EMA: the averaged weights are in " << checkpoint->last_saved() << "\n";
  }
  report_timing(trainer, *run_logger);
  std::cout << "Run files: " << a.run_dir << "/{steps.csv,epochs.csv,run.json}\n"
            << "Checkpoint: " << checkpoint_line(checkpoint.get()) << "\n";
  return 0;
}

}  // namespace

int run(Args& a) {
  check_schedule_flags(a);
  check_metrics_flag(a);
  const auto env = distributed::read_environment();  // torchrun's variables: checked before anything else
  const int threads = runtime::init_process(share_of_cores(a.threads, env));
  a.workers = share_of_cores(a.workers, env);
  const c10::Device device = local_device(a, env);
  if (a.gpu_memory_fraction > 0) runtime::set_gpu_memory_fraction(a.gpu_memory_fraction, device);
  const auto group = a.dry_run ? nullptr : join_group(a, env, device);
  const bool chief = !env || env->rank == 0;
  if (chief) std::cout << runtime::format_header(runtime::environment_info(device, threads)) << "\n";
  Sources sources = make_sources(a, chief);
  sources.class_weight = class_weight(a, *sources.train);  // a bad --class-weight: exit 2 before training
  const auto resumed = a.resume.empty() ? nullptr : saving::Checkpoint::read(a.resume);  // read once
  Model model = make_model(a, *sources.train, resumed.get());
  if (resumed) restore_optimizer_flags(a, resumed->info().optimizer_features);
  model->set_memory_format(a.memory_format);
  apply_dtype_policy(a, *model, device);
  if (chief) {
    model->print_summary(std::cout);
    std::cout << "FLOPs per sample (forward): " << model->flops_per_sample() << "\n" << std::flush;
  }
  if (a.dry_run) return 0;
  const int epochs_done = resumed ? resumed->info().position.epoch : 0;
  if (epochs_done >= a.epochs) {
    if (chief)
      std::cout << "Checkpoint already holds " << epochs_done << " epochs (--epochs " << a.epochs
                << "): nothing to do\n";
    return 0;
  }
  return train(a, model, sources, device, group, resumed);
}

}  // namespace train_cnn
