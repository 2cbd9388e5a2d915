// Tests for framework/src/runtime/device.cpp: parse_device, synchronize, set_gpu_memory_fraction (_CUDA tests skip
// without a GPU).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "torchfit/error.h"
#include "torchfit/runtime/device.h"
#include "torchfit/runtime/env_info.h"

namespace rt = torchfit::runtime;

namespace {
// Runs f and returns the exception message it throws as E (fails the test when it does not).
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}
}  // namespace

TEST(Device, ParsesCpu) {
  const auto d = rt::parse_device("cpu");
  EXPECT_TRUE(d.is_cpu());
  EXPECT_EQ(d.str(), "cpu");
}

TEST(Device, AutoIsCudaExactlyWhenAvailable) {
  const auto d = rt::parse_device("auto");
  if (at::hasCUDA()) {
    EXPECT_TRUE(d.is_cuda());
    EXPECT_EQ(d.index(), 0);
  } else {
    EXPECT_TRUE(d.is_cpu());
  }
}

TEST(Device, JunkIsInvalidArgumentNamingTheValue) {
  for (const std::string junk :
       {"gpu", "CPU", "", "cuda:", "cuda:x", "cuda:-1", "cuda:0:1", "cuda0", " cpu", "cuda:1234", "tpu"}) {
    const std::string msg = message_of<std::invalid_argument>([&] { rt::parse_device(junk); });
    EXPECT_NE(msg.find("'" + junk + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("cpu, cuda, cuda:N"), std::string::npos) << msg;
  }
}

TEST(Device, CudaOnCpuOnlyBuildIsTorchfitError) {
  if (at::hasCUDA()) GTEST_SKIP() << "CUDA is available here";
  for (const std::string spec : {"cuda", "cuda:0", "cuda:3"}) {
    const std::string msg = message_of<torchfit::Error>([&] { rt::parse_device(spec); });
    EXPECT_NE(msg.find("'" + spec + "'"), std::string::npos) << msg;
#ifndef TORCHFIT_WITH_CUDA
    EXPECT_NE(msg.find("this LibTorch is CPU-only"), std::string::npos) << msg;
#endif
  }
}

TEST(Device, SynchronizeCpuIsNoOp) { EXPECT_NO_THROW(rt::synchronize(c10::Device(c10::DeviceType::CPU))); }

TEST(Device, SynchronizeCudaWithoutCudaThrows) {
  if (at::hasCUDA()) GTEST_SKIP() << "CUDA is available here";
  EXPECT_THROW(rt::synchronize(c10::Device(c10::DeviceType::CUDA, 0)), torchfit::Error);
}

TEST(Device, MemoryFractionValidatesRangeAndDevice) {
  const c10::Device cpu(c10::DeviceType::CPU), cuda(c10::DeviceType::CUDA, 0);
  for (double bad : {0.0, -0.1, 1.0001, 2.0, std::nan("")}) {
    const std::string msg = message_of<std::invalid_argument>([&] { rt::set_gpu_memory_fraction(bad, cuda); });
    EXPECT_NE(msg.find("set_gpu_memory_fraction: the fraction must be in (0, 1]"), std::string::npos) << msg;
  }
  const std::string on_cpu = message_of<torchfit::Error>([&] { rt::set_gpu_memory_fraction(0.6, cpu); });
  EXPECT_NE(on_cpu.find("set_gpu_memory_fraction: the cap applies to a CUDA device"), std::string::npos) << on_cpu;
  EXPECT_NE(on_cpu.find("'cpu'"), std::string::npos) << on_cpu;
  if (!at::hasCUDA()) {
    const std::string no_cuda = message_of<torchfit::Error>([&] { rt::set_gpu_memory_fraction(0.6, cuda); });
    EXPECT_NE(no_cuda.find("set_gpu_memory_fraction: "), std::string::npos) << no_cuda;
#ifndef TORCHFIT_WITH_CUDA
    EXPECT_NE(no_cuda.find("CPU-only"), std::string::npos) << no_cuda;
#endif
  }
}

TEST(Device, MemoryFraction_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  const auto info = rt::environment_info(cuda, 0);
  const double total = info.at("gpus").at(0).at("memory_bytes").get<double>();
  const int64_t floats = static_cast<int64_t>(0.04 * total / 4.0);  // 4% of the GPU's memory
  rt::set_gpu_memory_fraction(0.02, cuda);
  EXPECT_THROW(at::empty({floats}, at::TensorOptions().device(cuda)), c10::Error)
      << "a 4% tensor must not fit under a 2% cap";
  rt::set_gpu_memory_fraction(1.0, cuda);
  EXPECT_NO_THROW(at::empty({floats}, at::TensorOptions().device(cuda)));
}

TEST(Device, Synchronize_CUDA) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA";
  const c10::Device cuda(c10::DeviceType::CUDA, 0);
  auto x = at::ones({256, 256}, at::TensorOptions().device(cuda));
  auto y = at::mm(x, x);
  rt::synchronize(cuda);
  EXPECT_DOUBLE_EQ(y.to(at::kCPU)[0][0].item<double>(), 256.0);
}
