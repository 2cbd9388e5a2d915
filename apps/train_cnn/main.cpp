// train_cnn — the article's experiment: the seed CNN on an image folder (train/, test/) with the Keras
// progress line and per-step timing logs, on CPU or CUDA.
//   train_cnn --device cuda --epochs 5 --data ./data
#include <CLI/CLI.hpp>

#include "../common/cli.h"
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/error.h>
#include <torchfit/io/atomic_file.h>
#include <torchfit/io/checkpoint.h>
#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/device.h>
#include <torchfit/runtime/env_info.h>
#include <torchfit/runtime/interrupt.h>
#include <torchfit/runtime/matmul.h>

#include <fstream>
#include <torchfit/runtime/process.h>
#include <torchfit/training/trainer.h>

#include "model_config.h"

namespace fs = std::filesystem;
using namespace torchfit;

namespace {

struct Args {
  std::string data = "./data";
  std::string device = "auto";
  int epochs = 5;
  int64_t steps_per_epoch = 1000;
  int64_t batch_size = 32;
  int64_t target_size = 150;
  int64_t validation_steps = 10;
  int workers = 0;
  int threads = 0;
  uint64_t seed = 42;
  double lr = 1e-3;
  int64_t dense2_units = 64;
  std::string run_dir;
  std::string checkpoint;
  std::string resume;
  int verbose = 1;
  bool no_augment = false;
  bool dry_run = false;
  double gpu_memory_fraction = 0.0;
  int64_t warmup_steps = 2;
  int64_t checkpoint_every = 0;
  bool no_checkpoint = false;
  std::string model_config;
  std::string memory_format = "auto";
};

int usage_error(const std::string& msg) {
  std::cerr << "train_cnn: " << msg << "\nRun with --help for usage.\n";
  return 2;
}

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Train the article's CNN (Keras-style) on an image folder with per-step timings.", "train_cnn"};
  app.add_option("--data", a.data, "Folder holding train/ and test/ (one sub-folder per class)")
      ->capture_default_str();
  app.add_option("--device", a.device, "cpu | cuda | cuda:N | auto (CUDA when available)")->capture_default_str();
  app.add_option("--epochs", a.epochs, "Epochs")->capture_default_str();
  app.add_option("--steps-per-epoch", a.steps_per_epoch, "Batches per epoch")->capture_default_str();
  app.add_option("--batch-size", a.batch_size, "Images per batch")->capture_default_str();
  app.add_option("--target-size", a.target_size, "Images are resized to SIZE x SIZE pixels")->capture_default_str();
  app.add_option("--validation-steps", a.validation_steps, "Test batches evaluated after each epoch (0 = all)")
      ->capture_default_str();
  app.add_option("--workers", a.workers, "Data loader threads (0 = CPU cores)")
      ->capture_default_str()
      ->check(torchfit::apps::int_range(0, torchfit::data::kMaxWorkers));
  app.add_option("--threads", a.threads, "LibTorch intra-op threads (0 = CPU cores)")->capture_default_str();
  app.add_option("--seed", a.seed, "Seed for weights, shuffling and augmentation")->capture_default_str();
  app.add_option("--lr", a.lr, "Adam learning rate")->capture_default_str();
  auto* dense2 = app.add_option("--dense2-units", a.dense2_units, "Units of the second Dense layer (article: 64)")
                     ->capture_default_str();
  app.add_option("--run-dir", a.run_dir, "Where steps.csv, epochs.csv, run.json go (default runs/<time>-<device>)");
  app.add_option("--checkpoint", a.checkpoint, "Checkpoint written after every epoch (default <run-dir>/model.ckpt)");
  app.add_option("--resume", a.resume,
                 "Continue from this checkpoint (weights, optimizer, learning rate, epoch/step, data position, RNG)");
  app.add_flag("--no-checkpoint", a.no_checkpoint, "Write no checkpoint (timing runs; Ctrl-C then saves nothing)");
  app.add_option("--checkpoint-every", a.checkpoint_every, "Also write the checkpoint every N steps (0 = per epoch)")
      ->capture_default_str();
  app.add_option("--verbose", a.verbose, "0 silent, 1 progress bar, 2 one line per epoch")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  app.add_flag("--no-augment", a.no_augment, "Train without augmentation (rescale only)");
  app.add_flag("--dry-run", a.dry_run, "Print the header, the Found lines and the summary, then exit");
  auto* fraction_opt = app.add_option("--gpu-memory-fraction", a.gpu_memory_fraction,
                 "Cap the CUDA caching allocator at this fraction of GPU memory (0 < F <= 1)");
  app.add_option("--model-config", a.model_config,
                 "Train this architecture (JSON, Sequential::to_json format) instead of the article's CNN; input "
                 "and last Dense units follow the data. Bare names are also looked up next to train_cnn "
                 "(seed_cnn.json = the article's CNN)")
      ->excludes(dense2);
  app.add_option("--warmup-steps", a.warmup_steps, "Steps reported as warm-up, excluded from epoch timings")
      ->capture_default_str();
  app.add_option("--memory-format", a.memory_format,
                 "Activation layout: auto (channels_last on the CPU, contiguous on CUDA), channels_last, contiguous")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "channels_last", "contiguous"}));
  TORCHFIT_CLI_PARSE(app, argc, argv);

  // Values CLI11 cannot check by type.
  if (a.epochs < 1) return usage_error("--epochs must be >= 1, got " + std::to_string(a.epochs));
  if (a.steps_per_epoch < 1) return usage_error("--steps-per-epoch must be >= 1, got " + std::to_string(a.steps_per_epoch));
  if (a.batch_size < 1) return usage_error("--batch-size must be >= 1, got " + std::to_string(a.batch_size));
  if (a.target_size < 10 || a.target_size > 4096) {
    return usage_error("--target-size must be in [10, 4096] pixels (two conv/pool stages), got " +
                       std::to_string(a.target_size));
  }
  if (a.validation_steps < 0) return usage_error("--validation-steps must be >= 0");
  if (a.workers < 0) return usage_error("--workers must be >= 0");
  if (a.threads < 0) return usage_error("--threads must be >= 0");
  if (a.dense2_units < 1) return usage_error("--dense2-units must be >= 1");
  if (!(a.lr > 0) || !std::isfinite(a.lr)) return usage_error("--lr must be a finite number > 0, got " + std::to_string(a.lr));
  if (a.warmup_steps < 0) return usage_error("--warmup-steps must be >= 0");
  if (a.checkpoint_every < 0) return usage_error("--checkpoint-every must be >= 0");
  if (a.no_checkpoint && (!a.checkpoint.empty() || a.checkpoint_every > 0)) {
    return usage_error("--no-checkpoint cannot be combined with --checkpoint or --checkpoint-every");
  }
  if (fraction_opt->count() > 0 && !(a.gpu_memory_fraction > 0 && a.gpu_memory_fraction <= 1)) {
    return usage_error("--gpu-memory-fraction must be in (0, 1], got " + std::to_string(a.gpu_memory_fraction));
  }
  if (!fs::exists(a.data)) return usage_error("--data: directory '" + a.data + "' does not exist");
  if (!fs::is_directory(a.data)) return usage_error("--data: '" + a.data + "' is not a directory");
  if (!a.checkpoint.empty() && fs::is_directory(a.checkpoint)) {
    return usage_error("--checkpoint: '" + a.checkpoint + "' is a directory; give a file path such as " +
                       (fs::path(a.checkpoint) / "model.ckpt").string());
  }
  try {
    if (a.device != "auto") runtime::parse_device(a.device);  // spelling check now; "auto" logs its choice later
  } catch (const std::invalid_argument& e) {
    return usage_error(std::string("--device: ") + e.what());
  } catch (const std::exception&) {
    // a valid spelling whose device is missing (e.g. cuda on a CPU-only build): reported below, exit 1
  }
  const fs::path train_dir = fs::path(a.data) / "train", test_dir = fs::path(a.data) / "test";
  if (!fs::is_directory(train_dir)) {
    return usage_error("--data: '" + a.data + "' has no train/ folder (expected train/<class>/*.png; "
                       "scripts/prepare_data.sh writes Fashion-MNIST there)");
  }
  if (!a.resume.empty() && !fs::is_regular_file(a.resume)) {
    return usage_error("--resume: checkpoint '" + a.resume + "' does not exist");
  }
  if (!a.resume.empty() && dense2->count() > 0) {
    return usage_error("--dense2-units cannot be combined with --resume (the checkpoint holds the model)");
  }
  if (!a.resume.empty() && !a.model_config.empty()) {
    return usage_error("--model-config cannot be combined with --resume (the checkpoint holds the model)");
  }
  if (!a.model_config.empty()) {
    try {
      a.model_config = train_cnn::resolve_model_config(a.model_config);
    } catch (const std::exception& e) {
      return usage_error(e.what());
    }
  }

  try {
    const int threads = runtime::init_process(a.threads);
    const c10::Device device = runtime::parse_device(a.device);
    if (fraction_opt->count() > 0) runtime::set_gpu_memory_fraction(a.gpu_memory_fraction, device);
    std::cout << runtime::format_header(runtime::environment_info(device, threads)) << "\n";

    // The article's generators: augmentation for training, rescale only for test.
    auto train_options = data::ImageDataGeneratorOptions().rescale(1.0 / 255);
    if (!a.no_augment) {
      train_options.shear_range(0.2).zoom_range(0.2).rotation_range(20).horizontal_flip(true);
    }
    data::ImageDataGenerator train_gen(train_options);
    data::ImageDataGenerator test_gen(data::ImageDataGeneratorOptions().rescale(1.0 / 255));
    auto flow = data::FlowOptions()
                    .target_size({a.target_size, a.target_size})
                    .batch_size(a.batch_size)
                    .class_mode("categorical")
                    .seed(a.seed)
                    .workers(a.workers);
    auto train = train_gen.flow_from_directory(train_dir.string(), flow);
    if (train->num_classes() < 2) {
      spdlog::warn("'{}' has {} class folder(s): a softmax over one class always predicts it (loss 0)",
                   train_dir.string(), train->num_classes());
    }
    std::unique_ptr<data::DirectoryIterator> test;
    if (fs::is_directory(test_dir)) {
      test = test_gen.flow_from_directory(test_dir.string(),
                                          data::FlowOptions(flow).shuffle(true).class_indices(train->class_indices()));
    } else {
      spdlog::warn("no test/ folder in '{}': training without validation", a.data);
    }

    at::manual_seed(a.seed);
    CompileOptions compile;
    compile.loss("categorical_crossentropy")
        .optimizer(OptimizerOptions().name("adam").learning_rate(a.lr))
        .metrics({"categorical_accuracy"});
    Sequential model{nullptr};
    int initial_epoch = 0;
    if (!a.resume.empty()) {
      io::CheckpointInfo info;
      model = io::load_model(a.resume, &info);
      const auto& saved = model->input_shape();
      if (saved.size() == 3 && (saved[0] != a.target_size || saved[1] != a.target_size)) {
        std::cerr << "train_cnn: --target-size " << a.target_size << " does not match the checkpoint '" << a.resume
                  << "', trained at " << saved[0] << "x" << saved[1] << " (use --target-size " << saved[0] << ")\n";
        return 2;
      }
      if (info.class_indices != train->class_indices() && !info.class_indices.empty()) {
        throw ConfigError("--resume: checkpoint '" + a.resume + "' was trained on other classes than '" +
                          train_dir.string() + "'");
      }
    } else if (!a.model_config.empty()) {
      model = train_cnn::load_model_config(a.model_config, a.target_size, 3, train->num_classes());
    } else {
      model = seed_cnn(a.target_size, train->num_classes(), a.dense2_units);
    }
    model->set_memory_format(a.memory_format);
    model->print_summary(std::cout);
    std::cout << "FLOPs per sample (forward): " << model->flops_per_sample() << "\n" << std::flush;
    if (a.dry_run) return 0;

    Trainer trainer(model, compile, device);
    int64_t initial_step = 0;
    if (!a.resume.empty()) {
      auto info = io::load_checkpoint(a.resume, trainer);
      initial_epoch = info.position.epoch;
      initial_step = info.position.step;
      if (initial_epoch >= a.epochs) {
        std::cout << "Checkpoint already holds " << initial_epoch << " epochs (--epochs " << a.epochs
                  << "): nothing to do\n";
        return 0;
      }
      if (initial_step > a.steps_per_epoch) {
        throw ConfigError("--resume: checkpoint '" + a.resume + "' stopped at step " + std::to_string(initial_step) +
                          " of epoch " + std::to_string(initial_epoch + 1) + ", beyond --steps-per-epoch " +
                          std::to_string(a.steps_per_epoch));
      }
      // Put the data sources where the saved run left them (same seed ⇒ the same next batches).
      train->skip(info.position.train_batches);
      if (test && a.validation_steps > 0) test->skip(info.position.val_batches);
      spdlog::info("resumed from '{}' at epoch {}, step {} ({} training batches done)", a.resume, initial_epoch + 1,
                   initial_step, info.position.train_batches);
    }

    if (a.run_dir.empty()) a.run_dir = "runs/" + timestamp() + "-" + (device.is_cuda() ? "cuda" : "cpu");
    if (a.checkpoint.empty()) a.checkpoint = (fs::path(a.run_dir) / "model.ckpt").string();
    if (fs::exists(fs::path(a.run_dir) / "steps.csv")) {
      spdlog::warn("--run-dir '{}' holds an earlier run: its steps.csv, epochs.csv and run.json are replaced", a.run_dir);
    }
    io::ensure_writable_directory(a.run_dir);
    if (!a.no_checkpoint && fs::path(a.checkpoint).has_parent_path()) {
      io::ensure_writable_directory(fs::path(a.checkpoint).parent_path());
    }
    auto checkpoint = std::make_shared<ModelCheckpoint>(a.checkpoint, "val_loss", false, "auto", a.checkpoint_every);
    checkpoint->set_class_indices(train->class_indices());

    nlohmann::json run_info = {{"data", a.data},
                               {"device", a.device},
                               {"epochs", a.epochs},
                               {"steps_per_epoch", a.steps_per_epoch},
                               {"batch_size", a.batch_size},
                               {"target_size", a.target_size},
                               {"validation_steps", a.validation_steps},
                               {"workers", a.workers},
                               {"threads", threads},
                               {"seed", a.seed},
                               {"lr", a.lr},
                               {"dense2_units", a.dense2_units},
                               {"model_config", a.model_config},
                               {"augment", !a.no_augment},
                               {"resume", a.resume},
                               {"checkpoint", a.no_checkpoint ? std::string() : a.checkpoint},
                               {"no_checkpoint", a.no_checkpoint},
                               {"memory_format", a.memory_format},
                               {"train_images", train->n()},
                               {"test_images", test ? test->n() : 0},
                               {"classes", train->class_indices()}};
    FitOptions fit;
    fit.epochs(a.epochs)
        .steps_per_epoch(a.steps_per_epoch)
        .validation_data(test.get())
        .validation_steps(test ? a.validation_steps : 0)
        .callbacks(a.no_checkpoint ? std::vector<std::shared_ptr<Callback>>{}
                                   : std::vector<std::shared_ptr<Callback>>{checkpoint})
        .verbose(a.verbose)
        .initial_epoch(initial_epoch)
        .initial_step(initial_step)
        .run_dir(a.run_dir)
        .warmup_steps(a.warmup_steps)
        .run_info(run_info);
    runtime::install_interrupt_handler();
    History h = trainer.fit(*train, fit);
    if (trainer.interrupted() && a.no_checkpoint) {
      std::cout << "Interrupted at epoch " << trainer.position().epoch + 1 << ", step " << trainer.position().step
                << " (--no-checkpoint: nothing saved)\n";
      return 130;
    }
    if (trainer.interrupted()) {
      checkpoint->save_now(trainer.position().epoch);
      std::cout << "Interrupted at epoch " << trainer.position().epoch + 1 << ", step " << trainer.position().step
                << ": checkpoint written to " << checkpoint->last_saved() << " (continue with --resume "
                << checkpoint->last_saved() << ")\n"
                << std::flush;
      return 130;
    }

    // Timing summary, the article's comparison figure, and the achieved rate against this device's
    // measured sgemm peak (a 2048×2048 product, the best the BLAS/cuBLAS does here).
    std::vector<double> ms;
    double data = 0, total = 0;
    for (const auto& t : trainer.step_timings()) {
      if (t.warmup) continue;
      ms.push_back(t.step_ms);
      data += t.data_ms;
      total += t.step_ms;
    }
    if (!ms.empty()) {
      const double median = percentile(ms, 0.5);  // the same statistics as epochs.csv
      const double flops_per_step =
          static_cast<double>(model->train_flops_per_sample()) * static_cast<double>(a.batch_size);
      const double achieved = flops_per_step / (median / 1000.0) / 1e9;
      runtime::MatmulBenchOptions mm;
      mm.sizes = {2048};
      mm.naive_max = 0;
      mm.run_cuda = device.is_cuda();
      mm.min_time_s = 0.2;
      double peak = 0;
      for (const auto& row : runtime::run_matmul_bench(mm)) {
        if (row.valid && (row.device == "cpu") == device.is_cpu()) peak = std::max(peak, row.gflops);
      }
      std::printf("Timing on %s: median %.1f ms/step, p90 %.1f ms/step, %.1f images/s, data wait %.1f%% "
                  "(%zu timed steps, warm-up excluded)\n",
                  device.str().c_str(), median, percentile(ms, 0.9),
                  1000.0 * static_cast<double>(a.batch_size) * static_cast<double>(ms.size()) / total,
                  100.0 * data / total, ms.size());
      std::printf("Compute: %.1f GFLOP per step, %.1f GFLOP/s achieved = %.0f%% of this device's measured sgemm "
                  "peak (%.1f GFLOP/s)\n",
                  flops_per_step / 1e9, achieved, peak > 0 ? 100.0 * achieved / peak : 0.0, peak);
      const std::string run_json_path = (fs::path(a.run_dir) / "run.json").string();
      std::ifstream in(run_json_path);
      nlohmann::json rj = nlohmann::json::parse(in, nullptr, false);
      if (!rj.is_discarded()) {
        rj["achieved_gflops_per_s"] = achieved;
        rj["sgemm_peak_gflops_per_s"] = peak;
        rj["share_of_peak"] = peak > 0 ? achieved / peak : 0.0;
        io::write_text_atomically(run_json_path, rj.dump(2));
      }
    }
    std::cout << "Run files: " << a.run_dir << "/{steps.csv,epochs.csv,run.json}\n"
              << "Checkpoint: " << (a.no_checkpoint ? std::string("none (--no-checkpoint)") : a.checkpoint) << "\n";
    return 0;
  } catch (const c10::Error& e) {
    spdlog::error("{}", e.what_without_backtrace());  // LibTorch's message without its C++ stack
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
