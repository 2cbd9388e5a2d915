#include "train.h"

#include <torchfit/runtime/logging.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/image_dataset.h>
#include <torchfit/distributed/local_setup.h>
#include <torchfit/error.h>
#include <torchfit/keras/keras_import.h>
#include <torchfit/keras/keras_save.h>
#include <torchfit/keras/model_config_file.h>
#include <torchfit/model/clone_model.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/process.h>
#include <torchfit/saving/checkpoint.h>
#include <torchfit/training/data_parallel.h>
#include <torchfit/training/keras_optimizer_state.h>
#include <torchfit/training/model_checkpoint.h>
#include <torchfit/training/optimizers.h>
#include <torchfit/training/predict.h>
#include <torchfit/training/run_logger.h>
#include <torchfit/training/run_report.h>
#include <torchfit/training/tensorboard.h>
#include <torchfit/training/trainer.h>

#include "../common/cli.h"
#include "keras_options.h"

namespace fs = std::filesystem;
using namespace torchfit;

namespace train_cnn {
namespace {

struct Sources {
  std::unique_ptr<data::BatchIterator> train, test;
  std::vector<int64_t> train_classes;      ///< the class index of every training sample
  std::map<int64_t, double> class_weight;  ///< --class-weight, read once the data is found
  int64_t num_classes() const { return static_cast<int64_t>(train->class_indices().size()); }
};

// --loader image_dataset: Keras 3's image_dataset_from_directory over train/ and test/ (test/ with train/'s
// classes), with --cache (Keras's dataset.cache()), --cache-max-mib and --sixteen-bit as the generator has
// them. --rescale and --no-augment have no meaning there (the values stay 0-255, nothing is augmented in
// the loader): given, they are refused with the way Keras 3 does it.
Sources make_dataset_sources(const Args& a, const fs::path& train_dir, const fs::path& test_dir, bool chief) {
  if (a.given.count("--rescale"))
    throw apps::UsageError(
        "--rescale applies to --loader generator only: image_dataset gives the 0-255 values; put a Rescaling "
        "layer in the model, as Keras 3 does (e.g. --model-config keras3_recipe_cnn.json)");
  if (a.given.count("--no-augment"))
    throw apps::UsageError(
        "--no-augment applies to --loader generator only: image_dataset does no augmentation; augmentation "
        "layers in the model do (a model without them trains unaugmented)");
  if (a.seed > 4294967295ull)  // Keras's seeds for image_dataset_from_directory are NumPy's 32-bit ones
    throw apps::UsageError("--seed " + std::to_string(a.seed) +
                           ": --loader image_dataset takes a seed in 0..4294967295 (NumPy's RandomState, as Keras)");
  const auto options = data::ImageDatasetOptions()
                           .label_mode("categorical")
                           .image_size({a.target_size, a.target_size})
                           .color_mode(a.color_mode)
                           .batch_size(a.batch_size)
                           .seed(static_cast<int64_t>(a.seed))
                           .workers(a.workers)
                           .max_image_pixels(a.max_image_pixels)
                           .sixteen_bit(a.sixteen_bit)
                           .cache(a.cache)
                           .cache_max_bytes(a.cache_max_mib << 20)
                           .verbose(chief);
  Sources s;
  auto train = data::image_dataset_from_directory(train_dir.string(), options);
  s.train_classes = train->labels();
  std::error_code ec;
  if (fs::is_directory(test_dir, ec)) {
    s.test = data::image_dataset_from_directory(test_dir.string(),
                                                data::ImageDatasetOptions(options).class_names(train->class_names()));
  } else {
    torchfit::logger().warn("no test/ folder in '{}': training without validation", a.data);
  }
  s.train = std::move(train);
  return s;
}

// The article's generators: augmentation for training, rescale only for test. `chief`: print the
// "Found" lines (rank 0 of a data-parallel run, or the only process).
Sources make_sources(const Args& a, bool chief) {
  const fs::path train_dir = fs::path(a.data) / "train", test_dir = fs::path(a.data) / "test";
  if (a.loader == "image_dataset") return make_dataset_sources(a, train_dir, test_dir, chief);
  data::ImageDataGenerator train_gen(a.no_augment ? data::ImageDataGeneratorOptions().rescale(a.rescale)
                                                  : data::article_augmentation().rescale(a.rescale));
  data::ImageDataGenerator test_gen(data::ImageDataGeneratorOptions().rescale(a.rescale));
  auto flow = data::FlowOptions()
                  .target_size({a.target_size, a.target_size})
                  .color_mode(a.color_mode)
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
  auto train = train_gen.flow_from_directory(train_dir.string(), flow);
  s.train_classes = train->classes();
  std::error_code ec;
  if (fs::is_directory(test_dir, ec)) {
    s.test = test_gen.flow_from_directory(test_dir.string(),
                                          data::FlowOptions(flow).shuffle(true).class_indices(train->class_indices()));
  } else {
    torchfit::logger().warn("no test/ folder in '{}': training without validation", a.data);
  }
  s.train = std::move(train);
  return s;
}

// The model input the data gives, Keras's (H, W, C): --target-size squared, --color-mode's channels.
Shape input_shape(const Args& a) {
  const int64_t channels = a.color_mode == "grayscale" ? 1 : a.color_mode == "rgba" ? 4 : 3;
  return {a.target_size, a.target_size, channels};
}

// A model with its weights — --load-model's (`flag`) or --resume's — checked against the data's input size
// and classes and fitted to them as --new-head and --freeze-base say (adapt_to_data).
Model fitted_to_data(Model model, const Args& a, int64_t classes, const std::string& flag, const std::string& path) {
  const std::string hint = model->input_shape() != input_shape(a) ? " (set --target-size and --color-mode to its input)"
                           : flag == "--load-model" ? " (add --new-head to replace its classification head)"
                                                    : "";
  std::vector<std::string> changes;
  try {
    model = adapt_to_data(model,
                          AdaptToDataOptions()
                              .input_shape(input_shape(a))
                              .classes(classes)
                              .new_head(a.new_head)
                              .freeze_base(a.freeze_base),
                          &changes);
  } catch (const ConfigError& e) {
    throw apps::UsageError(flag + " '" + path + "': " + e.what() + hint);
  }
  for (const auto& change : changes) torchfit::logger().info("{} '{}': {}", flag, path, change);
  return model;
}

// The article's CNN, a --model-config architecture, --load-model's model (a fully convolutional one, input
// (None, None, 3), built at the data's size), or the model of `resumed` (--resume's checkpoint).
Model make_model(const Args& a, int64_t classes, const saving::Checkpoint* resumed) {
  at::manual_seed(a.seed);
  if (!a.model_config.empty()) {
    std::vector<std::string> changes;
    Model model = keras::model_config_for_data(
        a.model_config, AdaptToDataOptions().input_shape(input_shape(a)).classes(classes), &changes);
    for (const auto& change : changes) torchfit::logger().info("model config '{}': {}", a.model_config, change);
    return model;
  }
  if (resumed) return fitted_to_data(saving::load_model(*resumed), a, classes, "--resume", a.resume);
  if (a.load_model.empty()) return seed_cnn(a.target_size, classes, a.dense2_units, input_shape(a)[2]);
  const InputSize size{a.target_size, a.target_size};
  Model model = fitted_to_data(saving::load_checkpoint_or_keras(a.load_model, "", nullptr, size), a, classes,
                               "--load-model", a.load_model);
  model->train();
  torchfit::logger().info("starting from the model and weights of '{}' (new optimizer, epoch 0)", a.load_model);
  return model;
}

// --mixed-precision, or the policy the checkpoint / model config saved (float32 for the article's CNN);
// a flag that changes a saved policy is logged, as --lr is. Checked against the device before training.
void apply_dtype_policy(const Args& a, ModelImpl& model, const c10::Device& device) {
  const std::string saved = model.dtype_policy().name();
  const std::string source = !a.resume.empty()         ? "the checkpoint '" + a.resume + "'"
                             : !a.model_config.empty() ? "the model config '" + a.model_config + "'"
                                                       : "";
  const bool from_flag = !a.mixed_precision.empty() || source.empty();
  if (!a.mixed_precision.empty() && a.mixed_precision != saved && !source.empty())
    torchfit::logger().info("dtype policy {} (from {}) → {} (--mixed-precision)", saved, source, a.mixed_precision);
  if (!a.mixed_precision.empty()) model.set_dtype_policy(a.mixed_precision);
  try {
    mixed_precision::check_supported(model.dtype_policy(), device);
  } catch (const ConfigError& e) {
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
  if (!a.resume.empty() && !a.given.count("--lr")) args["lr"] = "checkpoint's";
  if (!a.cache) args["cache_max_mib"] = nullptr;  // no cache, no budget
  // The value, not the help's "1/255"; none for image_dataset (0-255 values, as Keras).
  args["rescale"] = a.loader == "image_dataset" ? nlohmann::json(nullptr) : nlohmann::json(a.rescale);
  args["train_images"] = s.train->samples();
  args["test_images"] = s.test ? s.test->samples() : 0;
  args["classes"] = s.train->class_indices();
  return args;
}

// The folder --checkpoint writes into ("." for a bare file name).
std::string checkpoint_folder(const Args& a) {
  const fs::path dir = fs::path(a.checkpoint).parent_path();
  return dir.empty() ? std::string(".") : dir.string();
}

// Run folder and checkpoint path: defaults filled in (RunLoggerOptions' policy; RunLogger and
// ModelCheckpoint check at the start of fit that their folders can be written; RunLogger locks the run
// folder and the checkpoint's). The RunLogger's options: prepared by the process that writes the run files.
RunLoggerOptions prepare_outputs(Args& a, const Sources& s, const c10::Device& device, bool chief) {
  if (a.run_dir.empty()) a.run_dir = RunLoggerOptions::automatic_run_dir(device.is_cuda() ? "cuda" : "cpu", chief);
  if (a.checkpoint.empty()) a.checkpoint = (fs::path(a.run_dir) / "model.ckpt").string();
  if (!a.no_checkpoint) {
    apps::check_output_is_not_input({"--checkpoint", a.checkpoint},
                                    {{"--model-config", a.model_config}, {"--load-model", a.load_model}},
                                    {{"--data", a.data}}, /*new_files_too=*/true);
  }
  if (!a.save_keras.empty() && a.save_keras.back() == '/') {
    apps::check_folder_replaces_none(
        {"--save-keras", a.save_keras},
        {{"--run-dir", a.run_dir}, {"--checkpoint", checkpoint_folder(a)}, {"--data", a.data}});
  } else if (!a.save_keras.empty()) {
    apps::check_output_is_not_input({"--save-keras", a.save_keras}, {{"--checkpoint", a.checkpoint}},
                                    {{"--data", a.data}}, true);
  }
  RunLoggerOptions options(a.run_dir);
  options.run_info(run_arguments(a, s))
      .also_lock(a.no_checkpoint ? std::vector<std::string>{} : std::vector<std::string>{checkpoint_folder(a)});
  if (chief) options.prepare(a.resume);
  return options;
}

// Where an interrupted run stopped and how to continue it; its exit status.
int report_interrupt(const Trainer& trainer, const ModelCheckpoint* checkpoint) {
  std::cout << interrupt_report(trainer, checkpoint);
  if (checkpoint && checkpoint->saved_on_interrupt())
    std::cout << "Continue with --resume " << checkpoint->last_saved() << "\n";
  std::cout << std::flush;
  return interrupt_exit_status(trainer);
}

// Under torchrun (WORLD_SIZE > 1): joins the data-parallel group; nullptr for a single process.
std::shared_ptr<distributed::ProcessGroup> join_group(const Args& a, const std::optional<distributed::Environment>& env,
                                                      const c10::Device& device) {
  if (env && env->world_size > 1) {  // known before the rendezvous: no waiting for peers to say it
    check_global_batch(a.batch_size, env->world_size, "--batch-size",
                       "WORLD_SIZE=" + std::to_string(env->world_size) + " processes");
  }
  return distributed::join_process_group(
      env, distributed::ProcessGroupOptions{a.dist_backend, std::chrono::seconds(a.dist_timeout), device});
}

// Trains `model` on `s` with the run files and checkpoints of `a`; returns the exit status.
// The loader's scaling and the model's own, which Keras leaves to the user: the generator's --rescale on top
// of a model that scales its own input (a Rescaling first) scales twice; image_dataset's 0-255 values into
// a model that does not reach it unscaled. Said, not refused: either can be meant.
void warn_about_pixel_scaling(const Args& a, const ModelImpl& model) {
  const bool own = scales_own_input(model);
  if (a.loader == "generator" && own)
    torchfit::logger().warn(
        "the model scales its own input (a Rescaling or Normalization before its first weights) "
        "and the generator multiplies the pixels by --rescale {} too: use --loader image_dataset "
        "(0-255 values) or --rescale 1",
        a.rescale);
  if (a.loader == "image_dataset" && !own)
    torchfit::logger().warn(
        "--loader image_dataset feeds the 0-255 values and the model has no Rescaling or "
        "Normalization before its first weights: it trains on unscaled pixels (Keras 3 puts "
        "Rescaling(1/255) first, as keras3_recipe_cnn.json does)");
}

int train(Args& a, Model model, Sources& s, const c10::Device& device,
          const std::shared_ptr<distributed::ProcessGroup>& group,
          const std::shared_ptr<const saving::Checkpoint>& resumed, const OptimizerOptions& optimizer) {
  const bool chief = !group || group->rank() == 0;
  // --resume without --loss: the checkpoint's loss, as its optimizer (a resumed run trains the same objective).
  if (resumed && !a.given.count("--loss")) a.loss = resumed->info().compile.value("loss", a.loss);
  Trainer trainer(model, compile_options(a, optimizer), device);
  auto run_logger = std::make_shared<RunLogger>(prepare_outputs(a, s, trainer.device(), chief));
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
  trainer.fit(*s.train,
              FitOptions()
                  .epochs(a.epochs)
                  .steps_per_epoch(a.steps_per_epoch)
                  .validation_data(s.test.get())
                  .validation_steps(s.test ? a.validation_steps : 0)
                  .callbacks(callbacks)
                  .verbose(a.verbose)
                  .resume_checkpoint(resumed)
                  .resume_learning_rate(a.given.count("--lr") && resumed && !optimizer.learning_rate_schedule()
                                            ? std::optional<double>(a.optimizer.learning_rate())
                                            : std::nullopt)
                  .warmup_steps(a.warmup_steps)
                  .class_weight(s.class_weight)
                  .process_group(group)
                  .gradient_compression(a.grad_compression));
  if (!chief) return trainer.interrupted() ? interrupt_exit_status(trainer) : 0;  // rank 0 reports and writes
  if (trainer.interrupted()) return report_interrupt(trainer, checkpoint.get());
  if (checkpoint && checkpoint->holds_averaged_weights()) {
    std::cout << "EMA: the model in " << checkpoint->last_saved()
              << " holds the averaged weights (what predict_cnn loads); --resume continues from the trained "
                 "weights kept beside them\n";
  }
  if (!a.save_keras.empty()) {
    std::cout << "Keras file: " << a.save_keras << " ("
              << save_keras_file(trainer, a.save_keras, s.train->class_indices()) << ")\n";
  }
  const TimingReport timing = report_timing(trainer);
  std::cout << timing.text;
  if (!timing.fields.empty()) run_logger->update(timing.fields);
  std::cout << "Run files: " << a.run_dir << "/{steps.csv,epochs.csv,run.json}\n"
            << "Checkpoint: "
            << (!checkpoint                        ? "none (--no-checkpoint)"
                : checkpoint->last_saved().empty() ? "none written"
                                                   : checkpoint->last_saved())
            << "\n";
  return 0;
}

}  // namespace

int run(Args& a) {
  check_optimizer_flags(a);
  const auto env = distributed::read_environment();  // torchrun's variables: checked before anything else
  // The checkpoint is read once, for the optimizer (decided here, before anything is logged), the model
  // and fit.
  const auto resumed = a.resume.empty() ? nullptr : saving::Checkpoint::read(a.resume);
  const OptimizerOptions optimizer = optimizer_options(a, resumed ? &resumed->info() : nullptr);
  const int threads = runtime::init_process(distributed::local_share_of_cores(a.threads, env));
  a.workers = distributed::local_share_of_cores(a.workers, env);
  const c10::Device device = distributed::local_device(a.device, env);
  if (a.gpu_memory_fraction > 0) apps::set_gpu_memory_fraction_flag(a.gpu_memory_fraction, device);
  const auto group = a.dry_run ? nullptr : join_group(a, env, device);
  const bool chief = !env || env->rank == 0;
  if (chief) std::cout << runtime::format_header(runtime::environment_info(device, threads)) << "\n";
  Sources sources = make_sources(a, chief);
  if (sources.num_classes() < 2) {
    torchfit::logger().warn("'{}' has {} class folder(s): a softmax over one class always predicts it (loss 0)",
                            (fs::path(a.data) / "train").string(), sources.num_classes());
  }
  // A bad --class-weight: exit 2 before training.
  sources.class_weight = class_weight(a, sources.train_classes, sources.train->class_indices());
  Model model = make_model(a, sources.num_classes(), resumed.get());
  warn_about_pixel_scaling(a, *model);
  if (!a.save_keras.empty()) keras::check_keras_file(*model, a.save_keras);  // before training, not after
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
  return train(a, model, sources, device, group, resumed, optimizer);
}

}  // namespace train_cnn
