#pragma once
// train_cnn's flags: the values, their defaults and their CLI11 checks.
#include <cstdint>
#include <set>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <torchfit/data/image.h>
#include <torchfit/model/compile.h>

namespace train_cnn {

struct Args {
  std::string data = "./data";
  std::string device = "auto";
  int epochs = 5;
  int64_t steps_per_epoch = 1000;
  int64_t batch_size = 32;
  int64_t target_size = 150;
  /// --color-mode: "rgb" (3 channels, default) | "grayscale" (1) | "rgba" (4), as Keras's color_mode; the
  /// model's input is (target_size, target_size, channels)
  std::string color_mode = "rgb";
  int64_t validation_steps = 10;
  int workers = 0;
  /// --loader: "generator" (ImageDataGenerator.flow_from_directory, augmented) | "image_dataset"
  /// (Keras 3's image_dataset_from_directory: no augmentation, values 0..255)
  std::string loader = "generator";
  bool cache = false;            ///< --cache: decoded-image cache for the train and test sources (either loader)
  int64_t cache_max_mib = 4096;  ///< --cache-max-mib: budget of each of those caches, MiB
  int64_t max_image_pixels = torchfit::data::kMaxImagePixels;
  std::string sixteen_bit = "high_byte";
  int threads = 0;
  uint64_t seed = 42;
  std::set<std::string> given;  ///< the long flags on the command line ("--ema", "--lr", ...)
  int64_t dense2_units = 64;
  std::string run_dir;
  std::string checkpoint;
  std::string resume;
  int verbose = 1;
  bool no_augment = false;
  bool dry_run = false;
  double gpu_memory_fraction = 0.0;  ///< 0 = not given
  int64_t warmup_steps = 2;
  int64_t checkpoint_every = 0;
  bool no_checkpoint = false;
  std::string save_keras;  ///< --save-keras: the final model also written as this Keras file ("" = none)
  std::string model_config;
  std::string load_model;      ///< --load-model: a checkpoint or Keras file to start from (new optimizer, epoch 0)
  double rescale = 1.0 / 255;  ///< --rescale: factor the 0-255 pixel values are multiplied by (Keras rescale)
  bool new_head = false;       ///< --new-head: replace --load-model's classification head by Dense(classes, softmax)
  bool freeze_base = false;    ///< --freeze-base: freeze every layer of --load-model's model but the head
  std::string memory_format = "auto";
  /// dtype policy: float32, mixed_bfloat16, mixed_float16; "" = not given (the checkpoint's or the model
  /// config's policy, else float32)
  std::string mixed_precision;
  // Training visibility and control (docs/training.md, "Optimizer options", "Metrics", "TensorBoard").
  std::string loss = "categorical_crossentropy";  ///< --loss: a Keras loss name or loss object (JSON)
  std::string optimizer_spec = "adam";            ///< --optimizer: a Keras optimizer name or object (JSON)
  std::string metrics = "categorical_accuracy";   ///< --metrics: comma-separated Keras metric names
  std::string tensorboard;                        ///< --tensorboard DIR ("" = none)
  std::string update_freq = "epoch";              ///< --update-freq: epoch | batch | N
  std::string class_weight;                       ///< --class-weight: balanced | FILE.json ("" = none)
  /// The optimizer flags, bound to the options they set: --lr (learning_rate; not given: --optimizer's rate,
  /// else its Keras default), --clipnorm, --clipvalue, --global-clipnorm, --weight-decay, --ema (use_ema),
  /// --ema-momentum, --gradient-accumulation-steps (0 = off); each given replaces --optimizer's setting.
  torchfit::OptimizerOptions optimizer = torchfit::OptimizerOptions().name("adam").learning_rate(1e-3);
  std::string lr_schedule;  ///< cosine | exponential | piecewise | cosine_restarts | inverse_time | polynomial
  /// The schedule flags bound to the options they set: --decay-steps (0 = the run's remaining updates),
  /// --decay-rate (0.5), --alpha, --lr-warmup-steps (cosine: linear warm-up from 0 to --lr).
  torchfit::LearningRateScheduleOptions schedule = torchfit::LearningRateScheduleOptions().decay_rate(0.5);
  std::string lr_boundaries, lr_values;   ///< piecewise: comma-separated
  std::string dist_backend = "auto";      ///< under torchrun: auto (NCCL on CUDA, else Gloo), gloo, nccl
  std::string grad_compression = "none";  ///< under torchrun: none, bf16, fp16 (FitOptions::gradient_compression)
  int dist_timeout = 300;  ///< seconds: rendezvous and each collective (distributed::kDefaultTimeoutSeconds)
  /// The parsed command line (apps::parsed_arguments), for run.json's "arguments".
  nlohmann::json arguments;
};

/// Adds every flag with its check to `app`; after app.parse() each value in `a` is valid on its own
/// and combinations that exclude each other are refused (CLI11 exits 2 naming the flag).
void add_flags(CLI::App& app, Args& a);

}  // namespace train_cnn
