// Tests for framework/src/runtime/env_info.cpp: environment_info JSON and the header.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include <string>

#include "torchfit/runtime/env_info.h"
#include "torchfit/runtime/process.h"

namespace rt = torchfit::runtime;

TEST(EnvInfo, JsonHasVersionsThreadsAndBlas) {
  rt::init_process(2);
  const auto info = rt::environment_info(c10::Device(c10::DeviceType::CPU), 2);
  EXPECT_EQ(info.at("libtorch_version").get<std::string>(), TORCH_VERSION);
  EXPECT_EQ(info.at("torchfit_version").get<std::string>(), TORCHFIT_VERSION);
  EXPECT_EQ(info.at("device").get<std::string>(), "cpu");
  EXPECT_EQ(info.at("threads").at("intra_op").get<int>(), 2);
  EXPECT_EQ(info.at("threads").at("requested").get<int>(), 2);
  EXPECT_EQ(info.at("cuda").at("available").get<bool>(), at::hasCUDA());
  EXPECT_GE(info.at("cpu").at("cores_available").get<int>(), 1);
  EXPECT_FALSE(info.at("opencv_version").get<std::string>().empty());
  EXPECT_FALSE(info.at("parallel_backend").get<std::string>().empty());
  EXPECT_TRUE(info.at("gpus").is_array());
  if (!at::hasCUDA()) {
    EXPECT_TRUE(info.at("gpus").empty());
#ifndef TORCHFIT_WITH_CUDA
    EXPECT_EQ(info.at("build").get<std::string>(), "CPU-only LibTorch");
#endif
  }
  rt::init_process(rt::cpu_cores());
}

TEST(EnvInfo, HeaderContainsLibTorchVersionAndDevice) {
  const auto info = rt::environment_info(c10::Device(c10::DeviceType::CPU), 0);
  const std::string h = rt::format_header(info);
  EXPECT_NE(h.find(std::string("LibTorch   ") + TORCH_VERSION), std::string::npos) << h;
  EXPECT_NE(h.find("Device     cpu"), std::string::npos) << h;
  EXPECT_NE(h.find("OpenCV"), std::string::npos) << h;
  EXPECT_NE(h.find(std::string("torchfit ") + TORCHFIT_VERSION), std::string::npos) << h;
  EXPECT_NE(h.back(), '\n');
}

TEST(EnvInfo, HeaderToleratesMissingKeys) {
  const std::string h = rt::format_header(nlohmann::json::object());
  EXPECT_NE(h.find("LibTorch   unknown"), std::string::npos) << h;
}
