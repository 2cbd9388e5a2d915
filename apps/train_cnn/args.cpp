#include "args.h"

#include <filesystem>

#include <torchfit/keras/keras_save.h>
#include <torchfit/keras/model_config_file.h>
#include <torchfit/training/keras_optimizers.h>
#include <torchfit/training/losses.h>
#include <torchfit/training/metrics.h>
#include <torchfit/training/tensorboard.h>

#include "../common/cli.h"

namespace fs = std::filesystem;
using namespace torchfit;
using namespace torchfit::apps;

namespace train_cnn {
namespace {

// --data must hold train/<class>/… (test/ is optional).
// --save-keras: a path whose ending names a Keras format, in a folder that can be written.
CLI::Validator keras_output() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        if (torchfit::keras::keras_output_kind(s).empty())
          return "'" + s + "' names no Keras format (.keras, .h5, .weights.h5, or a TF.js folder ending in /)";
        if (!s.empty() && s.back() == '/') return output_directory()(s);
        const fs::path parent = fs::path(s).parent_path();
        if (!parent.empty() && !fs::is_directory(parent)) return "the folder '" + parent.string() + "' does not exist";
        return output_file()(s);
      },
      "FILE|DIR/");
}

CLI::Validator has_train_folder() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        std::string problem;
        const fs::file_status st = torchfit::apps::path_status((fs::path(s) / "train").string(), &problem);
        if (!problem.empty()) return problem;
        if (fs::is_directory(st)) return "";
        return "'" + s +
               "' has no train/ folder (expected train/<class>/*.png; scripts/prepare_data.sh writes "
               "Fashion-MNIST there)";
      },
      "");
}

// Bare names are looked up where the shipped architectures lie too (keras::find_model_config: next to
// train_cnn, then the installed models folder); the option then holds the path found.
CLI::Validator model_config_file() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        try {
          s = torchfit::keras::find_model_config(s, {TORCHFIT_MODELS_DIR});
          return "";
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "JSON");
}

void add_data_flags(CLI::App& app, Args& a) {
  app.add_option("--data", a.data, "Folder holding train/ and test/ (one sub-folder per class)")
      ->capture_default_str()
      ->check(existing_directory())
      ->check(has_train_folder());
  add_batch_size_flag(app, a.batch_size);
  add_target_size_flag(app, a.target_size);
  app.add_option("--color-mode", a.color_mode,
                 "rgb | grayscale | rgba: the images' channels (3, 1, 4) and so the model's input (Keras color_mode)")
      ->capture_default_str()
      ->check(CLI::IsMember({"rgb", "grayscale", "rgba"}));
  add_workers_flag(app, a.workers);
  app.add_option("--loader", a.loader,
                 "generator (ImageDataGenerator.flow_from_directory: augmented, --rescale) | image_dataset (Keras 3's "
                 "image_dataset_from_directory: bilinear resize, values 0-255; augment with the model's layers, e.g. "
                 "--model-config keras3_recipe_cnn.json)")
      ->capture_default_str()
      ->check(CLI::IsMember({"generator", "image_dataset"}));
  auto* cache =
      app.add_flag("--cache", a.cache,
                   "Keep decoded, resized images in memory after their first load, with either --loader "
                   "(image_dataset: Keras's dataset.cache(); the generator's augmentation still runs every epoch)");
  app.add_option("--cache-max-mib", a.cache_max_mib,
                 "Budget of the --cache of train/ and of test/ each, MiB (over it: the rest is decoded every epoch)")
      ->capture_default_str()
      ->check(int_range(1, int64_t{1} << 30))
      ->needs(cache);
  add_max_image_pixels_flag(app, a.max_image_pixels);
  add_sixteen_bit_flag(app, a.sixteen_bit);
  app.add_option("--seed", a.seed, "Seed for weights, shuffling and augmentation")
      ->capture_default_str()
      ->check(seed_value());
  app.add_flag("--no-augment", a.no_augment,
               "Train without augmentation (rescale only); --loader generator only (image_dataset does none: "
               "augmentation layers in the model do)");
  app.add_option("--rescale", a.rescale,
                 "Factor the pixel values (0-255) are multiplied by, in training and validation (Keras rescale; "
                 "1 for a model trained on raw pixels, such as MLPerf Tiny's ResNet-8); --loader generator only "
                 "(image_dataset gives 0-255: a Rescaling layer in the model, as Keras 3)")
      ->default_str("1/255")
      ->transform(positive_fraction());
}

void add_training_flags(CLI::App& app, Args& a) {
  add_device_flag(app, a.device, "cpu | cuda | cuda:N | auto (CUDA when available)");
  app.add_option("--epochs", a.epochs, "Epochs")->capture_default_str()->check(int_range(1));
  app.add_option("--steps-per-epoch", a.steps_per_epoch, "Batches per epoch")
      ->capture_default_str()
      ->check(int_range(1, LLONG_MAX));
  app.add_option("--validation-steps", a.validation_steps, "Test batches evaluated after each epoch (0 = all)")
      ->capture_default_str()
      ->check(int_range(0, LLONG_MAX));
  add_threads_flag(app, a.threads);
  app.add_option("--lr", a.optimizer.learning_rate(),
                 "Learning rate (default: --optimizer's, else its Keras default: 1e-3, sgd 1e-2; with --resume: "
                 "replaces the checkpoint's rate, or its schedule's)")
      ->check(positive_finite());
  app.add_option("--verbose", a.verbose, "0 silent, 1 progress bar, 2 one line per epoch")
      ->capture_default_str()
      ->check(int_range(0, 2));
  app.add_option("--warmup-steps", a.warmup_steps, "Steps reported as warm-up, excluded from epoch timings")
      ->capture_default_str()
      ->check(int_range(0, LLONG_MAX));
  app.add_option("--gpu-memory-fraction", a.gpu_memory_fraction,
                 "Cap the CUDA caching allocator at this fraction of GPU memory (0 < F <= 1)")
      ->check(unit_fraction());
  add_memory_format_flag(app, a.memory_format);
  add_mixed_precision_flag(app, a.mixed_precision,
                           "Dtype policy (Keras mixed_precision): float32; mixed_bfloat16 (CPU with AVX512-BF16/AMX, "
                           "CUDA >= 8.0); mixed_float16 (CUDA only, with dynamic loss scaling). Default: the policy "
                           "saved in --resume's checkpoint or --model-config's JSON, else float32");
  app.add_option("--dist-backend", a.dist_backend,
                 "Under torchrun (data-parallel): auto (NCCL on CUDA, else Gloo), gloo or nccl")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  app.add_option("--grad-compression", a.grad_compression,
                 "Under torchrun: how gradients travel between the processes: none (float32), bf16 or fp16 "
                 "(half the bytes, summed in float32, as PyTorch DDP's bf16/fp16_compress_hook)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "bf16", "fp16"}));
  app.add_option("--dist-timeout", a.dist_timeout,
                 "Under torchrun: seconds to wait for the other processes at the start and in each allreduce "
                 "(a killed peer is reported at once, a stuck one after this)")
      ->capture_default_str()
      ->check(int_range(1, 7 * 24 * 3600));
}

void add_optimizer_flags(CLI::App& app, Args& a) {
  auto* clipnorm =
      app.add_option("--clipnorm", a.optimizer.clipnorm(), "Clip each gradient to this norm (Keras clipnorm)")
          ->check(positive_finite());
  auto* clipvalue =
      app.add_option("--clipvalue", a.optimizer.clipvalue(), "Clip gradient elements to [-V, V] (Keras clipvalue)")
          ->check(positive_finite())
          ->excludes(clipnorm);
  app.add_option("--global-clipnorm", a.optimizer.global_clipnorm(),
                 "Clip all gradients together to this norm (Keras global_clipnorm)")
      ->check(positive_finite())
      ->excludes(clipnorm)
      ->excludes(clipvalue);
  app.add_option("--weight-decay", a.optimizer.weight_decay(),
                 "Decoupled weight decay: w -= lr * wd * w before each update (Keras)")
      ->check(positive_finite());
  auto* ema = app.add_flag("--ema", a.optimizer.use_ema(),
                           "Keep an exponential moving average of the weights; the model takes it at the end");
  app.add_option("--ema-momentum", a.optimizer.ema_momentum(), "EMA momentum (Keras ema_momentum)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->needs(ema);
  app.add_option("--gradient-accumulation-steps", a.optimizer.gradient_accumulation_steps(),
                 "Update the weights every N batches with their mean gradient (Keras 3)")
      ->check(int_range(2, 1 << 20));
  auto* schedule = app.add_option("--lr-schedule", a.lr_schedule,
                                  "Learning-rate schedule from --lr: cosine (CosineDecay), exponential, piecewise, "
                                  "inverse_time, polynomial (end rate 1e-4)")
                       ->check(CLI::IsMember({"cosine", "exponential", "piecewise", "inverse_time", "polynomial"}));
  app.add_option(
         "--lr-warmup-steps", a.schedule.warmup_steps(),
         "cosine: updates of linear warm-up from 0 to --lr (Keras warmup_steps; --warmup-steps is the timing warm-up)")
      ->check(int_range(1, LLONG_MAX))
      ->needs(schedule);
  app.add_option("--decay-steps", a.schedule.decay_steps(),
                 "cosine/exponential/inverse_time/polynomial: decay_steps (default: the run's updates after warm-up)")
      ->check(int_range(1, LLONG_MAX))
      ->needs(schedule);
  app.add_option("--decay-rate", a.schedule.decay_rate(), "exponential, inverse_time: decay_rate per decay_steps")
      ->capture_default_str()
      ->check(positive_finite())
      ->needs(schedule);
  app.add_option("--alpha", a.schedule.alpha(), "cosine: fraction of the rate left at the end")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->needs(schedule);
  app.add_option("--lr-boundaries", a.lr_boundaries, "piecewise: increasing update counts, e.g. 1000,2000")
      ->needs(schedule);
  app.add_option("--lr-values", a.lr_values, "piecewise: one more rate than boundaries, e.g. 1e-3,5e-4,1e-4")
      ->needs(schedule);
}

void add_report_flags(CLI::App& app, Args& a) {
  app.add_option("--optimizer", a.optimizer_spec,
                 "Keras optimizer: a name (adam, adamw, sgd, rmsprop, adagrad, adadelta, adamax, nadam, lion, ftrl, "
                 "adafactor) or "
                 "a Keras optimizer object as JSON, e.g. '{\"class_name\": \"SGD\", \"config\": {\"momentum\": 0.9}}' "
                 "(with --resume: replaces the checkpoint's)")
      ->capture_default_str()
      ->check(library_check(  // a known optimizer with valid settings
          [](const std::string& v) {
            check_optimizer_options(OptimizerOptions::from_keras(nlohmann::json(v)).resolved());
          },
          "NAME|JSON"));
  app.add_option("--loss", a.loss,
                 "Keras loss: a name (categorical_crossentropy, categorical_focal_crossentropy, huber, kld, ...) or a "
                 "Keras loss object as JSON; the labels are one-hot")
      ->capture_default_str()
      ->check(library_check(  // known to Loss, and one that takes one-hot labels
          [](const std::string& v) {
            if (Loss::parse(v).class_name == "SparseCategoricalCrossentropy") {
              throw ConfigError("the loaders give one-hot labels: use categorical_crossentropy");
            }
          },
          "NAME|JSON"));
  app.add_option(
         "--metrics", a.metrics,
         "Comma-separated Keras metrics: names (accuracy, precision, auc, f1_score, mse, ...) or metric objects' "
         "JSON ({\"class_name\": \"Precision\", \"config\": {\"thresholds\": 0.3}})")
      ->capture_default_str()
      ->check(library_check(  // each name known, none twice, no empty item (MetricSet)
          [](const std::string& v) { MetricSet(comma_items(v, "", true), "categorical_crossentropy", false, 2); },
          "LIST"));
  auto* tb =
      app.add_option("--tensorboard", a.tensorboard, "Write TensorBoard event files to DIR/train and DIR/validation")
          ->check(output_directory());
  app.add_option("--update-freq", a.update_freq, "TensorBoard: epoch, batch or every N batches")
      ->capture_default_str()
      ->check(library_check([](const std::string& v) { TensorBoard(TensorBoardOptions(".").update_freq(v)); },
                            "epoch|batch|N"))
      ->needs(tb);
  app.add_option("--class-weight", a.class_weight,
                 "balanced (scikit-learn's n / (k * count)) or a JSON file {class name or index: weight} (with "
                 "--resume: replaces the checkpoint's)");
}

void add_model_flags(CLI::App& app, Args& a) {
  auto* dense2 = app.add_option("--dense2-units", a.dense2_units, "Units of the second Dense layer (article: 64)")
                     ->capture_default_str()
                     ->check(int_range(1));
  auto* config = app.add_option("--model-config", a.model_config,
                                "Train this architecture (JSON, Keras or torchfit model JSON) instead of the article's "
                                "CNN; input and last Dense units follow the data. Bare names are also looked up next "
                                "to train_cnn (seed_cnn.json = the article's CNN)")
                     ->transform(model_config_file())
                     ->excludes(dense2);
  app.add_option("--resume", a.resume,
                 "Continue from this checkpoint (weights, optimizer, learning rate, epoch/step, data position, RNG)")
      ->check(existing_file("checkpoint"))
      ->excludes(dense2)
      ->excludes(config);
  app.add_option("--load-model", a.load_model,
                 "Start from this model's architecture and weights: a torchfit checkpoint or a Keras .h5/.keras file "
                 "(new optimizer, epoch 0). Its input must be (--target-size, --target-size, channels of --color-mode) "
                 "and its output the data's classes")
      ->check(existing_file("model"))
      ->excludes(dense2)
      ->excludes(config)
      ->excludes("--resume");
  app.add_flag("--new-head", a.new_head,
               "With --load-model: replace its classification head (the output Dense) by a new Dense(classes, "
               "softmax) for the data's classes, reading what the old head read (Keras transfer learning)")
      ->needs("--load-model");
  app.add_flag("--freeze-base", a.freeze_base,
               "With --load-model: freeze every layer but the (new) head (Keras base_model.trainable = False; "
               "frozen BatchNormalization runs in inference mode)")
      ->needs("--load-model");
  app.add_flag("--dry-run", a.dry_run, "Print the header, the Found lines and the summary, then exit");
}

void add_output_flags(CLI::App& app, Args& a) {
  app.add_option("--run-dir", a.run_dir, "Where steps.csv, epochs.csv, run.json go (default runs/<time>-<device>)")
      ->check(output_directory());
  auto* checkpoint = app.add_option("--checkpoint", a.checkpoint,
                                    "Checkpoint written after every epoch (default <run-dir>/model.ckpt)")
                         ->check(output_file("model.ckpt"));
  auto* every = app.add_option("--checkpoint-every", a.checkpoint_every,
                               "Also write the checkpoint every N steps (0 = per epoch)")
                    ->capture_default_str()
                    ->check(int_range(0, LLONG_MAX));
  app.add_flag("--no-checkpoint", a.no_checkpoint, "Write no checkpoint (timing runs; Ctrl-C then saves nothing)")
      ->excludes(checkpoint)
      ->excludes(every);
  app.add_option("--save-keras", a.save_keras,
                 "Also write the trained model as a Keras file when training ends: FILE.keras (Keras 3), "
                 "FILE.h5 (tf.keras 2), FILE.weights.h5, or DIR/ (TensorFlow.js)")
      ->check(keras_output());
}

}  // namespace

void add_flags(CLI::App& app, Args& a) {
  add_data_flags(app, a);
  add_training_flags(app, a);
  add_optimizer_flags(app, a);
  add_report_flags(app, a);
  add_model_flags(app, a);
  add_output_flags(app, a);
}

}  // namespace train_cnn
