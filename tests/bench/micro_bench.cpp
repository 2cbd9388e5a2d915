// Google Benchmark micro-benchmarks of torchfit's hot pieces (not a test; `build/tests/torchfit_bench`).
//   optimizer step on the article's 42.5 M-parameter Dense kernel: torch::optim::Adam vs FusedAdam
//   one training step of the article's CNN at a small size
//   batch assembly from an in-memory source
#include <benchmark/benchmark.h>

#include <torchfit/model/seed_cnn.h>
#include <torchfit/runtime/process.h>
#include <torchfit/training/fused_adam.h>
#include <torchfit/training/trainer.h>

using namespace torchfit;

namespace {

template <typename Optimizer>
void BM_AdamStep(benchmark::State& state) {
  runtime::init_process();
  auto w = at::randn({512, 82944}).requires_grad_(true);
  w.mutable_grad() = at::randn({512, 82944});
  Optimizer opt({w}, torch::optim::AdamOptions(1e-3).eps(1e-7));
  opt.step();  // allocate the state
  for (auto _ : state) {
    opt.step();
    benchmark::DoNotOptimize(w.data_ptr<float>());
  }
  state.SetBytesProcessed(state.iterations() * w.numel() * 4 * 4 * 2);  // p, g, m, v read; p, m, v written
}

void BM_TrainStepSeedCnn(benchmark::State& state) {
  runtime::init_process();
  const int64_t size = state.range(0);
  at::manual_seed(0);
  Trainer t(seed_cnn(size, 8, 64), CompileOptions());
  auto x = at::rand({32, 3, size, size});
  auto y = at::one_hot(at::randint(0, 8, {32}), 8).to(at::kFloat);
  t.train_step(x, y);
  for (auto _ : state) benchmark::DoNotOptimize(t.train_step(x, y));
}

void BM_TensorIteratorBatch(benchmark::State& state) {
  data::TensorIterator it(at::rand({1024, 3, 64, 64}), at::rand({1024, 8}), 32, true, 1);
  for (auto _ : state) benchmark::DoNotOptimize(it.next().x.data_ptr());
}

}  // namespace

BENCHMARK_TEMPLATE(BM_AdamStep, torch::optim::Adam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_AdamStep, FusedAdam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepSeedCnn)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TensorIteratorBatch)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_MAIN();
