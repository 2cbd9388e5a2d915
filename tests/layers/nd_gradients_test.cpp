// The gradients of the 1-D, 3-D and adaptive classes (input and every Keras weight) against the NumPy
// reference's: central differences of its float64 forward, written from TensorFlow's and Keras's
// definitions (tests/layers/reference/keras_layers_reference.py, numeric_vjp). Odd sizes, strides 2 and
// "same"/"causal" padding, where the backward passes differ most from the forward's bookkeeping.
#include <gtest/gtest.h>

#include <torchfit/layers/adaptive_pooling.h>
#include <torchfit/layers/conv1d.h>
#include <torchfit/layers/conv1d_transpose.h>
#include <torchfit/layers/conv3d.h>
#include <torchfit/layers/conv3d_transpose.h>
#include <torchfit/layers/depthwise_conv1d.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/padding_cropping1d3d.h>
#include <torchfit/layers/pooling1d3d.h>
#include <torchfit/layers/separable_conv1d.h>
#include <torchfit/layers/up_sampling1d3d.h>

#include "support/keras_reference.h"

using namespace torchfit;
using torchfit::testing::expect_gradients_match_reference;
using Json = nlohmann::json;

TEST(NdGradients, ConvolutionsMatchTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  expect_gradients_match_reference(Conv1D(Conv1DOptions(3, 3).padding("causal").dilation_rate(2)).ptr(), {7, 2},
                                   {{"op", "conv1d"}, {"strides", 1}, {"dilation_rate", 2}, {"padding", "causal"}},
                                   {"kernel", "bias"});
  expect_gradients_match_reference(Conv1D(Conv1DOptions(2, 3).strides(2).padding("same")).ptr(), {8, 2},
                                   {{"op", "conv1d"}, {"strides", 2}, {"dilation_rate", 1}, {"padding", "same"}},
                                   {"kernel", "bias"});
  expect_gradients_match_reference(
      Conv1DTranspose(Conv1DTransposeOptions(2, 3).strides(2).padding("same")).ptr(), {5, 2},
      {{"op", "conv_transpose_nd"}, {"strides", {2}}, {"dilation_rate", {1}}, {"padding", "same"}}, {"kernel", "bias"});
  expect_gradients_match_reference(
      DepthwiseConv1D(DepthwiseConv1DOptions(3).depth_multiplier(2).strides(2).padding("same")).ptr(), {7, 2},
      {{"op", "depthwise_conv_nd"}, {"strides", {2}}, {"dilation_rate", {1}}, {"padding", "same"}},
      {"depthwise_kernel", "bias"});
  expect_gradients_match_reference(
      SeparableConv1D(SeparableConv1DOptions(2, 3).padding("same")).ptr(), {6, 2},
      {{"op", "separable_conv_nd"}, {"strides", {1}}, {"dilation_rate", {1}}, {"padding", "same"}},
      {"depthwise_kernel", "pointwise_kernel", "bias"});
  expect_gradients_match_reference(
      Conv3D(Conv3DOptions(2, {2, 3, 2}).strides({1, 2, 2}).padding("same")).ptr(), {3, 5, 4, 2},
      {{"op", "conv_nd"}, {"strides", {1, 2, 2}}, {"dilation_rate", {1, 1, 1}}, {"padding", "same"}},
      {"kernel", "bias"});
  expect_gradients_match_reference(
      Conv3DTranspose(Conv3DTransposeOptions(2, {2, 2, 3}).strides({2, 1, 2}).padding("same")).ptr(), {2, 3, 3, 2},
      {{"op", "conv_transpose_nd"}, {"strides", {2, 1, 2}}, {"dilation_rate", {1, 1, 1}}, {"padding", "same"}},
      {"kernel", "bias"});
}

TEST(NdGradients, PoolingMatchesTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  const auto pool = [](const std::string& op, std::vector<int64_t> size, std::vector<int64_t> strides) {
    return Json{{"op", op}, {"pool_size", size}, {"strides", strides}, {"padding", "same"}};
  };
  expect_gradients_match_reference(
      MaxPooling1D(MaxPooling1DOptions(3).strides(std::vector<int64_t>{2}).padding("same")).ptr(), {8, 2},
      pool("max_pool", {3}, {2}));
  expect_gradients_match_reference(
      AveragePooling1D(AveragePooling1DOptions(2).strides(std::vector<int64_t>{2}).padding("same")).ptr(), {7, 2},
      pool("avg_pool", {2}, {2}));
  expect_gradients_match_reference(
      MaxPooling3D(MaxPooling3DOptions({2, 3, 2}).strides(std::vector<int64_t>{2, 2, 1}).padding("same")).ptr(),
      {3, 5, 4, 2}, pool("max_pool", {2, 3, 2}, {2, 2, 1}));
  expect_gradients_match_reference(
      AveragePooling3D(AveragePooling3DOptions(2).strides(std::vector<int64_t>{2, 1, 2}).padding("same")).ptr(),
      {3, 4, 5, 2}, pool("avg_pool", {2, 2, 2}, {2, 1, 2}));
  for (const bool keepdims : {false, true}) {
    const auto opts = GlobalPoolingOptions().keepdims(keepdims);
    expect_gradients_match_reference(GlobalMaxPooling1D(opts).ptr(), {5, 3},
                                     {{"op", "global_max_pool"}, {"keepdims", keepdims}});
    expect_gradients_match_reference(GlobalAveragePooling3D(opts).ptr(), {2, 3, 4, 2},
                                     {{"op", "global_avg_pool"}, {"keepdims", keepdims}});
    expect_gradients_match_reference(GlobalMaxPooling3D(opts).ptr(), {2, 3, 4, 2},
                                     {{"op", "global_max_pool"}, {"keepdims", keepdims}});
  }
}

TEST(NdGradients, AdaptivePoolingMatchesTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  // Uneven bins (7 → 3, 5 → 2): neighbouring bins overlap, so an input feeds two outputs.
  expect_gradients_match_reference(AdaptiveAveragePooling1D(AdaptivePooling1DOptions(3)).ptr(), {7, 2},
                                   {{"op", "adaptive_avg_pool"}, {"output_size", {3}}});
  expect_gradients_match_reference(AdaptiveMaxPooling1D(AdaptivePooling1DOptions(3)).ptr(), {7, 2},
                                   {{"op", "adaptive_max_pool"}, {"output_size", {3}}});
  expect_gradients_match_reference(AdaptiveAveragePooling2D(AdaptivePooling2DOptions({3, 2})).ptr(), {7, 5, 2},
                                   {{"op", "adaptive_avg_pool"}, {"output_size", {3, 2}}});
  expect_gradients_match_reference(AdaptiveMaxPooling2D(AdaptivePooling2DOptions({3, 2})).ptr(), {7, 5, 2},
                                   {{"op", "adaptive_max_pool"}, {"output_size", {3, 2}}});
  expect_gradients_match_reference(AdaptiveAveragePooling3D(AdaptivePooling3DOptions({2, 3, 2})).ptr(), {3, 5, 4, 2},
                                   {{"op", "adaptive_avg_pool"}, {"output_size", {2, 3, 2}}});
  expect_gradients_match_reference(AdaptiveMaxPooling3D(AdaptivePooling3DOptions({2, 3, 2})).ptr(), {3, 5, 4, 2},
                                   {{"op", "adaptive_max_pool"}, {"output_size", {2, 3, 2}}});
}

TEST(NdGradients, PaddingCroppingAndUpSamplingMatchTheReference) {
  TORCHFIT_REQUIRE_KERAS_REFERENCE();
  expect_gradients_match_reference(ZeroPadding1D(ZeroPadding1DOptions({1, 3})).ptr(), {5, 2},
                                   {{"op", "zero_padding"}, {"padding", {{1, 3}}}});
  expect_gradients_match_reference(ZeroPadding3D(ZeroPadding3DOptions({0, 1, 2, 0, 1, 3})).ptr(), {2, 2, 3, 2},
                                   {{"op", "zero_padding"}, {"padding", {{0, 1}, {2, 0}, {1, 3}}}});
  expect_gradients_match_reference(Cropping1D(Cropping1DOptions({2, 1})).ptr(), {7, 3},
                                   {{"op", "cropping"}, {"cropping", {{2, 1}}}});
  expect_gradients_match_reference(Cropping3D(Cropping3DOptions({1, 0, 0, 2, 2, 1})).ptr(), {3, 5, 6, 2},
                                   {{"op", "cropping"}, {"cropping", {{1, 0}, {0, 2}, {2, 1}}}});
  expect_gradients_match_reference(UpSampling1D(UpSampling1DOptions(3)).ptr(), {4, 2},
                                   {{"op", "up_sampling_nearest"}, {"size", {3}}});
  expect_gradients_match_reference(UpSampling3D(UpSampling3DOptions({2, 1, 3})).ptr(), {2, 2, 3, 2},
                                   {{"op", "up_sampling_nearest"}, {"size", {2, 1, 3}}});
}
