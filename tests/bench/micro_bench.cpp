// Google Benchmark micro-benchmarks of torchfit's hot pieces (not a test; `build/tests/torchfit_bench`).
//   optimizer step on the article's 42.5 M-parameter Dense kernel: torch::optim::Adam vs FusedAdam
//   one training step of the article's CNN at a small size
//   batch assembly from an in-memory source
//   input pipeline pieces at the article's 150×150: PNG decode of a 28×28 Fashion-MNIST-sized gray
//   image, cv::warpAffine (float 1 and 3 channels, uint8 1 channel) against torchfit's own affine_resample,
//   ImageDataGenerator::transform_into
//   with the seeds' augmentation (gray source → rgb batch, and a colour source), and one batch of 32
//   from an image folder on disk; data::resize_to_float (the loader's resize) per interpolation
//   the article's two convolutions' kernel + bias gradients at batch 32: LibTorch's (oneDNN) against
//   torchfit's kernel (layers/conv_weight_grad.h); the first pooling's backward: ATen's
//   max_pool2d_with_indices_backward against torchfit's index-free one (layers/max_pool_train.h); the
//   article's Dense kernel gradient: OpenBLAS against torchfit's (layers/dense_weight_grad.h)
#include <benchmark/benchmark.h>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>

#include <filesystem>
#include <fstream>

#include "data/affine_resample.h"  // private headers (framework/src)
#include "layers/conv_weight_grad.h"
#include "layers/dense_weight_grad.h"
#include "layers/max_pool_train.h"

#include <torchfit/data/directory_iterator.h>
#include <torchfit/data/image.h>
#include <torchfit/data/image_data_generator.h>
#include <torchfit/data/random.h>

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

data::Image test_image(int size, int channels) {
  data::Image img{size, size, channels, {}};
  img.pixels.resize(static_cast<size_t>(size) * size * channels);
  for (size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<uint8_t>((i * 37) % 251);
  return img;
}

void BM_DecodePng28Gray(benchmark::State& state) {
  const std::vector<uint8_t> png = data::encode_png(test_image(28, 1));
  for (auto _ : state)
    benchmark::DoNotOptimize(
        data::decode_image(png.data(), png.size(), data::ColorMode::rgb, "bench", true).pixels.data());
}

// The warp the seeds' augmentation does: rotation 10°, shear and zoom, about the centre, bilinear.
void BM_WarpAffine150(benchmark::State& state) {
  const int type = static_cast<int>(state.range(0));
  cv::setNumThreads(static_cast<int>(state.range(1)));  // OpenCV's own parallel_for inside one warp
  cv::Mat src(150, 150, type), dst(150, 150, type);
  cv::randu(src, 0, 255);
  const cv::Matx23d M(1.083, -0.291, 17.3, 0.191, 1.083, -20.0);  // 10°, zoom 1.1, shear ~0.1, centred
  for (auto _ : state) {
    cv::warpAffine(src, dst, M, dst.size(), cv::INTER_LINEAR | cv::WARP_INVERSE_MAP, cv::BORDER_REPLICATE);
    benchmark::DoNotOptimize(dst.data);
  }
  state.SetItemsProcessed(state.iterations());
  cv::setNumThreads(-1);
}

// torchfit's own resample (scipy's rules, data/affine_resample.h) on the same image and mapping as
// BM_WarpAffine150 (the OpenCV matrix with rows and columns swapped), float 1 and 3 channels.
void BM_AffineResample150(benchmark::State& state) {
  const int c = static_cast<int>(state.range(0));
  std::vector<float> src(150 * 150 * static_cast<size_t>(c)), dst(src.size());
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>((i * 37) % 251);
  const std::array<double, 6> m{1.083, 0.191, -20.0, -0.291, 1.083, 17.3};
  for (auto _ : state) {
    data::affine_resample(src.data(), 150, 150, c, m, false, false, data::FillMode::nearest, 0.f, dst.data());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_TransformInto150(benchmark::State& state) {
  const int channels = static_cast<int>(state.range(0));  // source channels; the batch is rgb
  const data::ImageDataGenerator gen(data::article_augmentation());
  std::vector<float> hwc(150 * 150 * 3), scratch(hwc.size()), out(hwc.size());
  data::Rng rng(1);
  for (auto _ : state) {
    for (size_t i = 0; i < hwc.size(); ++i) hwc[i] = static_cast<float>(i % 256);
    const data::TransformParams p = gen.get_random_transform(150, 150, rng);
    gen.transform_into(hwc.data(), 150, 150, channels, &p, out.data(), scratch.data(), 3);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations());
}

// The loader's resize (uint8 → float HWC): args = interpolation (index into kResizeNames), source
// size, target size, channels. 28 → 150 gray is the article's Fashion-MNIST path.
const char* const kResizeNames[] = {"nearest", "bilinear", "bicubic", "area"};
void BM_ResizeToFloat(benchmark::State& state) {
  const std::string interpolation = kResizeNames[state.range(0)];
  const int in = static_cast<int>(state.range(1)), out_size = static_cast<int>(state.range(2));
  const data::Image img = test_image(in, static_cast<int>(state.range(3)));
  std::vector<float> out(static_cast<size_t>(out_size) * out_size * img.channels);
  for (auto _ : state) {
    data::resize_to_float(img, out_size, out_size, interpolation, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(interpolation);
  state.SetItemsProcessed(state.iterations());
}

// One batch of 32 from 64 gray 28×28 PNGs in two class folders, built on the calling thread.
void BM_DirectoryBatch(benchmark::State& state) {
  const auto dir = std::filesystem::temp_directory_path() / "torchfit_bench_images";
  std::filesystem::remove_all(dir);
  const std::vector<uint8_t> png = data::encode_png(test_image(28, 1));
  for (int k = 0; k < 64; ++k) {
    std::filesystem::create_directories(dir / (k % 2 ? "a" : "b"));
    std::ofstream(dir / (k % 2 ? "a" : "b") / (std::to_string(k) + ".png"), std::ios::binary)
        .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
  }
  auto gen = std::make_shared<const data::ImageDataGenerator>(data::article_augmentation());
  data::DirectoryIterator it(dir.string(), data::FlowOptions().target_size({150, 150}).batch_size(32).workers(0), gen);
  int64_t b = 0;
  for (auto _ : state) benchmark::DoNotOptimize(it.make_batch(b / 2, b % 2).x.data_ptr()), ++b;
  state.SetItemsProcessed(state.iterations() * 32);
  std::filesystem::remove_all(dir);
}

// The article's convolutions at batch 32, BM_ConvWeightGrad/A/B: A 0 = first (3 → 32 channels, 150×150),
// 1 = second (32 → 64, 74×74); B 0 = LibTorch's convolution_backward (kernel and bias), 1 = torchfit's.
void BM_ConvWeightGrad(benchmark::State& state) {
  runtime::init_process();
  if (torchfit::detail::simd_level() == 0) {
    state.SkipWithError(torchfit::detail::kNoVectorPath);
    return;
  }
  const bool first = state.range(0) == 0;
  const int64_t ci = first ? 3 : 32, co = first ? 32 : 64, h = first ? 150 : 74;
  const auto x = at::randn({32, ci, h, h}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto w = at::randn({co, ci, 3, 3});
  const auto gy = at::randn({32, co, h - 2, h - 2}).contiguous(at::MemoryFormat::ChannelsLast);
  for (auto _ : state) {
    if (state.range(1) == 0) {
      benchmark::DoNotOptimize(at::convolution_backward(gy, x, w, at::IntArrayRef{co}, {1, 1}, {0, 0}, {1, 1}, false,
                                                        {0, 0}, 1, {false, true, true}));
    } else {
      benchmark::DoNotOptimize(torchfit::detail::conv2d_weight_grad(gy, x, w, {1, 1}, {0, 0}, true));
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 32 * (h - 2) * (h - 2) * co * ci * 9 * state.iterations() / 1e9,
                                                 benchmark::Counter::kIsRate);
}

// The article's first pooling's backward (32×32×148×148 channels_last, 2×2): BM_MaxPoolBackward/0 ATen's
// (zero fill, then scatter through the recorded indices), /1 torchfit's (one write per element, no indices).
void BM_MaxPoolBackward(benchmark::State& state) {
  runtime::init_process();
  if (torchfit::detail::simd_level() == 0) {
    state.SkipWithError(torchfit::detail::kNoVectorPath);
    return;
  }
  const auto x = at::randn({32, 32, 148, 148}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto pooled = at::max_pool2d_with_indices(x, {2, 2}, {2, 2});
  const auto gy = at::randn(std::get<0>(pooled).sizes()).contiguous(at::MemoryFormat::ChannelsLast);
  for (auto _ : state) {
    if (state.range(0) == 0) {
      benchmark::DoNotOptimize(
          at::max_pool2d_with_indices_backward(gy, x, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, std::get<1>(pooled)));
    } else {
      benchmark::DoNotOptimize(torchfit::detail::max_pool2d_input_grad(gy, x, {2, 2}));
    }
  }
}

// The article's Dense kernel gradient gyᵀ·x, (512, 32)·(32, 82944): BM_DenseWeightGrad/0 LibTorch's
// (OpenBLAS sgemm, as Dense's autograd computes it), /1 torchfit's (layers/dense_weight_grad.h).
void BM_DenseWeightGrad(benchmark::State& state) {
  runtime::init_process();
  if (torchfit::detail::simd_level() == 0) {
    state.SkipWithError(torchfit::detail::kNoVectorPath);
    return;
  }
  const auto gy = at::randn({32, 512});
  const auto x = at::randn({32, 82944});
  for (auto _ : state) {
    if (state.range(0) == 0) {
      benchmark::DoNotOptimize(gy.t().mm(x));
    } else {
      benchmark::DoNotOptimize(torchfit::detail::dense_weight_grad(gy, x));
    }
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 32 * 512 * 82944 * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_DenseWeightGrad)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ConvWeightGrad)->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MaxPoolBackward)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DecodePng28Gray)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_WarpAffine150)->ArgsProduct({{CV_32FC1, CV_32FC3, CV_8UC1}, {1, 2}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AffineResample150)->Arg(1)->Arg(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransformInto150)->Arg(1)->Arg(3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResizeToFloat)
    ->Args({0, 28, 150, 1})
    ->Args({1, 28, 150, 1})
    ->Args({1, 28, 150, 3})
    ->Args({1, 300, 150, 3})
    ->Args({2, 28, 150, 3})
    ->Args({3, 300, 150, 3})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DirectoryBatch)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_AdamStep, torch::optim::Adam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_TEMPLATE(BM_AdamStep, FusedAdam)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TrainStepSeedCnn)->Arg(64)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_TensorIteratorBatch)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_MAIN();
