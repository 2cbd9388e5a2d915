// bench_step — times torchfit's fit() step on the article's CNN with synthetic data (batch 32 of
// 150×150×3 random images, 8 classes, Adam, categorical cross-entropy), the torchfit side of
// scripts/bench.sh goal 1/2 (and, with --device cuda, of scripts/gpu_check.sh's step comparison). Prints one
// JSON line with the median step time (warm-up excluded; on CUDA each step's clock reads are synchronised)
// and the step's FLOPs counted from the model (train_gflop_per_step: 28.9 for the article's CNN at batch 32).
#include <CLI/CLI.hpp>

#include "../common/cli.h"

#include <iostream>

#include <torch/csrc/autograd/profiler_legacy.h>

#include <torchfit/error.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

int main(int argc, char** argv) {
  int64_t steps = 6, warmup = 2, batch = 32, size = 150;
  int threads = 0;
  bool reference_adam = false;
  std::string memory_format = "auto";
  std::string policy = "float32";
  std::string device_spec = "cpu";
  bool as_written = false;
  CLI::App app{"Time torchfit's training step on the article's CNN (synthetic data).", "bench_step"};
  app.add_option("--steps", steps, "Timed steps")->capture_default_str()->check(torchfit::apps::int_range(1));
  app.add_option("--warmup", warmup, "Warm-up steps (not timed)")
      ->capture_default_str()
      ->check(torchfit::apps::int_range(0));
  torchfit::apps::add_batch_size_flag(app, batch, "Batch size");
  torchfit::apps::add_target_size_flag(app, size, "Image size");
  torchfit::apps::add_threads_flag(app, threads, "Intra-op threads (0 = cores)");
  app.add_flag("--reference-adam", reference_adam, "Use torch::optim::Adam instead of torchfit's FusedAdam");
  torchfit::apps::add_memory_format_flag(app, memory_format);
  torchfit::apps::add_device_flag(app, device_spec);
  torchfit::apps::add_mixed_precision_flag(app, policy,
                                           "Dtype policy: float32, mixed_bfloat16, mixed_float16 (CUDA only)");
  std::string profile;
  app.add_option("--profile", profile,
                 "Also write LibTorch's profiler trace of the timed steps to this file (Chrome trace JSON; "
                 "scripts/bench/profile_summary.py tables it per operator); the warm-up runs as a fit() of its own")
      ->check(torchfit::apps::output_file());
  app.add_flag("--relu-before-pool", as_written,
               "Run Conv2D(relu) -> MaxPooling2D as written instead of pooling before the ReLU (comparisons)");
  TORCHFIT_CLI_PARSE(app, argc, argv);
  return torchfit::apps::run_reporting_errors("bench_step", [&] {
    const int used = runtime::init_process(threads);
    const c10::Device device = runtime::parse_device(device_spec);
    at::manual_seed(0);
    auto x = at::rand({batch, 3, size, size});
    auto y = at::one_hot(at::randint(0, 8, {batch}), 8).to(at::kFloat);
    data::TensorIterator it(x, y, batch);
    Sequential model = seed_cnn(size, 8, 64);
    model->set_memory_format(memory_format);
    model->set_pool_before_relu(!as_written);
    model->set_dtype_policy(policy);
    try {
      mixed_precision::check_supported(model->dtype_policy(), device);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("--mixed-precision: ") + e.what());
    }
    Trainer trainer(
        model, CompileOptions().metrics({"categorical_accuracy"}).optimizer(OptimizerOptions().fused(!reference_adam)),
        device);
    std::ostringstream quiet;
    if (profile.empty()) {
      trainer.fit(it,
                  FitOptions().epochs(1).steps_per_epoch(steps + warmup).warmup_steps(warmup).verbose(0).out(&quiet));
    } else {  // only the timed steps under the profiler
      if (warmup > 0) trainer.fit(it, FitOptions().epochs(1).steps_per_epoch(warmup).verbose(0).out(&quiet));
      torch::autograd::profiler::RecordProfile guard(profile);
      trainer.fit(it, FitOptions().epochs(1).steps_per_epoch(steps).warmup_steps(0).verbose(0).out(&quiet));
    }
    const TimingSummary timing = summarize_timings(trainer.step_timings());  // the statistics of epochs.csv
    const double median = timing.median_ms;
    const double flops_per_sample = static_cast<double>(trainer.model()->train_flops_per_sample());
    nlohmann::json out = {
        {"impl", reference_adam ? "torchfit-reference-adam" : "torchfit"},
        {"threads", used},
        {"median_ms", median},
        {"steps_ms", timing.step_ms},
        {"gflops_per_s", achieved_gflops_per_s(timing, flops_per_sample)},
        // The step's FLOPs, counted from the model: 3x forward (forward, input and weight gradients) of
        // every Conv2D and Dense, less the first layer's input gradient, times the batch.
        {"train_gflop_per_step", flops_per_sample * static_cast<double>(batch) / 1e9},
        {"steps_run", trainer.position().train_batches},
        {"memory_format", memory_format},
        {"mixed_precision", policy},
        {"device", device.str()},
        {"memory_format_used", trainer.model()->uses_channels_last(device) ? "channels_last" : "contiguous"},
        {"pool_before_relu", !as_written},
        {"blas_core", runtime::blas_kernels().active}};
    std::cout << out.dump() << "\n";
    return 0;
  });
}
