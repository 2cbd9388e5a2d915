#pragma once
// Models covering every layer the ONNX exporter writes (saving/onnx.h), shared by the OpenCV DNN test
// (tests/saving/onnx_export_test.cpp) and the ONNX model writer of the script test (tests/support/onnx_zoo.cpp).
#include <functional>
#include <map>
#include <string>

#include <torch/torch.h>

#include <torchfit/layers/activation.h>
#include <torchfit/layers/activation_fn.h>
#include <torchfit/layers/activity_regularization.h>
#include <torchfit/layers/adaptive_pooling.h>
#include <torchfit/layers/advanced_activations.h>
#include <torchfit/layers/attention.h>
#include <torchfit/layers/auto_contrast.h>
#include <torchfit/layers/average_pooling2d.h>
#include <torchfit/layers/batch_normalization.h>
#include <torchfit/layers/bidirectional.h>
#include <torchfit/layers/center_crop.h>
#include <torchfit/layers/conv1d.h>
#include <torchfit/layers/conv1d_transpose.h>
#include <torchfit/layers/conv2d.h>
#include <torchfit/layers/conv2d_transpose.h>
#include <torchfit/layers/conv3d.h>
#include <torchfit/layers/conv3d_transpose.h>
#include <torchfit/layers/cropping2d.h>
#include <torchfit/layers/cut_mix.h>
#include <torchfit/layers/dense.h>
#include <torchfit/layers/depthwise_conv1d.h>
#include <torchfit/layers/depthwise_conv2d.h>
#include <torchfit/layers/dropout.h>
#include <torchfit/layers/einsum_dense.h>
#include <torchfit/layers/embedding.h>
#include <torchfit/layers/equalization.h>
#include <torchfit/layers/flatten.h>
#include <torchfit/layers/global_pooling2d.h>
#include <torchfit/layers/group_normalization.h>
#include <torchfit/layers/group_query_attention.h>
#include <torchfit/layers/gru.h>
#include <torchfit/layers/input_layer.h>
#include <torchfit/layers/layer_normalization.h>
#include <torchfit/layers/lstm.h>
#include <torchfit/layers/masking.h>
#include <torchfit/layers/max_pooling2d.h>
#include <torchfit/layers/merge.h>
#include <torchfit/layers/mix_up.h>
#include <torchfit/layers/multi_head_attention.h>
#include <torchfit/layers/noise.h>
#include <torchfit/layers/normalization.h>
#include <torchfit/layers/padding_cropping1d3d.h>
#include <torchfit/layers/permute.h>
#include <torchfit/layers/pooling1d3d.h>
#include <torchfit/layers/rand_augment.h>
#include <torchfit/layers/random_brightness.h>
#include <torchfit/layers/random_color_degeneration.h>
#include <torchfit/layers/random_color_jitter.h>
#include <torchfit/layers/random_contrast.h>
#include <torchfit/layers/random_crop.h>
#include <torchfit/layers/random_erasing.h>
#include <torchfit/layers/random_flip.h>
#include <torchfit/layers/random_grayscale.h>
#include <torchfit/layers/random_hue.h>
#include <torchfit/layers/random_posterization.h>
#include <torchfit/layers/random_rotation.h>
#include <torchfit/layers/random_saturation.h>
#include <torchfit/layers/random_sharpness.h>
#include <torchfit/layers/random_shear.h>
#include <torchfit/layers/random_translation.h>
#include <torchfit/layers/random_zoom.h>
#include <torchfit/layers/repeat_vector.h>
#include <torchfit/layers/rescaling.h>
#include <torchfit/layers/reshape.h>
#include <torchfit/layers/resizing.h>
#include <torchfit/layers/rms_normalization.h>
#include <torchfit/layers/separable_conv1d.h>
#include <torchfit/layers/separable_conv2d.h>
#include <torchfit/layers/simple_rnn.h>
#include <torchfit/layers/solarization.h>
#include <torchfit/layers/time_distributed.h>
#include <torchfit/layers/unit_normalization.h>
#include <torchfit/layers/up_sampling1d3d.h>
#include <torchfit/layers/up_sampling2d.h>
#include <torchfit/layers/zero_padding2d.h>
#include <torchfit/model/model.h>
#include <torchfit/model/seed_cnn.h>

namespace torchfit::testing {

/// Every weight uniform in [-0.5, 0.5), moving variances in [0.5, 1.5): outputs depend on every weight
/// (default initialisations leave biases 0, BatchNormalization an identity).
inline void randomize_weights(Model& model, uint64_t seed) {
  torch::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& p : model->named_parameters()) {
    if (p.key().find("variance") != std::string::npos) {  // BatchNormalization's, Normalization's
      p.value().uniform_(0.5, 1.5);
    } else {
      p.value().uniform_(-0.5, 0.5);
    }
  }
  model->eval();
}

/// One image model: Input (H, W, C) → `body` → output, named `name`.
inline Model image_model(const std::string& name, Shape input, const std::function<KerasTensor(KerasTensor)>& body) {
  KerasTensor x = Input(std::move(input), "image");
  return Model({x}, {body(x)}, name);
}

inline KerasTensor conv(KerasTensor x, int64_t filters, int64_t k, int64_t stride, const std::string& padding,
                        const std::string& activation = "linear") {
  return Conv2D(Conv2DOptions(filters, k).strides(stride).padding(padding).activation(activation))->call(x);
}

/// ResNet-style residual model: stride-2 "same" convolutions (TensorFlow's asymmetric padding), BN, a 1×1
/// projection shortcut, Add, global pooling and a softmax classifier. Input (16, 16, 3) (the stride-2 3×3
/// convolution pads (0, 1)), 4 classes.
inline Model residual_model() {
  return image_model("residual", {16, 16, 3}, [](KerasTensor x) {
    KerasTensor y = conv(x, 8, 3, 1, "same");
    y = BatchNormalization()->call(y);
    y = Activation("relu")->call(y);
    KerasTensor r = conv(y, 8, 3, 2, "same", "relu");
    r = BatchNormalization(BatchNormalizationOptions().epsilon(1e-5))->call(r);
    r = conv(r, 8, 3, 1, "same");
    KerasTensor s = conv(y, 8, 1, 2, "valid");
    y = Add()->call({r, s});
    y = ReLU()->call(y);
    y = GlobalAveragePooling2D()->call(y);
    y = Dropout(DropoutOptions(0.5))->call(y);
    return Dense(DenseOptions(4).activation("softmax"))->call(y);
  });
}

/// Named models, each covering a few layers (one layer family per model, so a runtime's gap is named).
inline std::map<std::string, std::function<Model()>> onnx_test_models() {
  using M = std::function<Model()>;
  std::map<std::string, M> m;
  m["seed_cnn"] = [] { return Model(seed_cnn(24, 5, 16)); };
  m["residual"] = residual_model;
  m["conv_same_strided"] = [] {
    return image_model("conv_same_strided", {9, 10, 3}, [](KerasTensor x) {
      x = Conv2D(Conv2DOptions(4, {3, 2}).strides({2, 3}).padding("same").activation("tanh"))->call(x);
      return Conv2D(Conv2DOptions(3, 3).dilation_rate(2).padding("same").use_bias(false).activation("sigmoid"))
          ->call(x);
    });
  };
  m["depthwise_separable"] = [] {
    return image_model("depthwise_separable", {9, 9, 3}, [](KerasTensor x) {
      x = DepthwiseConv2D(DepthwiseConv2DOptions(3).depth_multiplier(2).strides(2).padding("same"))->call(x);
      return SeparableConv2D(SeparableConv2DOptions(5, 3).padding("same").activation("relu"))->call(x);
    });
  };
  m["conv_transpose"] = [] {
    return image_model("conv_transpose", {5, 6, 3}, [](KerasTensor x) {
      x = Conv2DTranspose(Conv2DTransposeOptions(4, 3).strides(2).padding("same"))->call(x);
      return Conv2DTranspose(Conv2DTransposeOptions(2, 2).strides(2).padding("valid"))->call(x);
    });
  };
  m["conv_transpose_output_padding"] = [] {
    return image_model("conv_transpose_output_padding", {5, 5, 2}, [](KerasTensor x) {
      return Conv2DTranspose(Conv2DTransposeOptions(3, 3).strides(2).padding("valid").output_padding(1))->call(x);
    });
  };
  m["pooling"] = [] {
    return image_model("pooling", {11, 11, 3}, [](KerasTensor x) {
      // "same" on 11: pads (0, 1) (TensorFlow's extra pixel at the end), then (1, 1) with 1 real pixel less
      // at the edges (Keras's average counts only real pixels).
      KerasTensor a = MaxPooling2D(MaxPooling2DOptions(2).padding("same"))->call(x);
      a = AveragePooling2D(AveragePooling2DOptions(3).strides(std::vector<int64_t>{1}).padding("same"))->call(a);
      KerasTensor b = AveragePooling2D(AveragePooling2DOptions(3).strides(std::vector<int64_t>{4}))->call(x);
      a = GlobalMaxPooling2D()->call(a);
      b = Flatten()->call(b);
      return Concatenate()->call({a, b});
    });
  };
  m["pooling1d"] = [] {  // sequences: "same" on 9 pads (0, 1), averages leave the padded steps out
    return image_model("pooling1d", {9, 3}, [](KerasTensor x) {
      KerasTensor a = MaxPooling1D(MaxPooling1DOptions(2).padding("same"))->call(x);  // (5, 3)
      a = AveragePooling1D(AveragePooling1DOptions(3).strides(std::vector<int64_t>{1}).padding("same"))->call(a);
      KerasTensor b = AveragePooling1D(AveragePooling1DOptions(3).strides(std::vector<int64_t>{2}))->call(x);  // (4, 3)
      b = MaxPooling1D(MaxPooling1DOptions(2).strides(std::vector<int64_t>{1}))->call(b);                      // (3, 3)
      return Concatenate()->call({Flatten()->call(a), Flatten()->call(b)});
    });
  };
  m["pooling3d"] = [] {  // volumes (D, H, W, C): odd sizes, "same" and strided "valid"
    return image_model("pooling3d", {5, 6, 7, 2}, [](KerasTensor x) {
      KerasTensor a = MaxPooling3D(MaxPooling3DOptions(2).padding("same"))->call(x);  // (3, 3, 4, 2)
      a = AveragePooling3D(AveragePooling3DOptions(3).strides(std::vector<int64_t>{1}).padding("same"))->call(a);
      KerasTensor b =
          AveragePooling3D(AveragePooling3DOptions({2, 3, 2}).strides(std::vector<int64_t>{2, 2, 3}))->call(x);
      b = MaxPooling3D(MaxPooling3DOptions({1, 2, 2}).strides(std::vector<int64_t>{1}))->call(b);
      return Concatenate()->call({Flatten()->call(a), Flatten()->call(b)});
    });
  };
  m["flatten_dense"] = [] {
    return image_model("flatten_dense", {4, 5, 3}, [](KerasTensor x) {
      x = Flatten()->call(x);
      x = Dense(DenseOptions(6).activation("elu"))->call(x);
      x = BatchNormalization()->call(x);
      return Dense(DenseOptions(3).use_bias(false).activation("gelu"))->call(x);
    });
  };
  m["group_unit_rms_normalization"] = [] {  // Keras 3's normalization layers on an image and a sequence
    return image_model("group_unit_rms_normalization", {3, 4, 6}, [](KerasTensor x) {
      x = GroupNormalization(GroupNormalizationOptions().groups(3))->call(x);
      x = UnitNormalization(UnitNormalizationOptions().axis(KerasAxes({1, 2})))->call(x);
      return RMSNormalization()->call(x);
    });
  };
  m["normalization_sequence"] = [] {
    return image_model("normalization_sequence", {5, 4}, [](KerasTensor x) {
      x = GroupNormalization(GroupNormalizationOptions().groups(2).center(false))->call(x);
      x = UnitNormalization()->call(x);
      return RMSNormalization(RMSNormalizationOptions().axis(KerasAxes({1, 2})))->call(x);
    });
  };
  m["noise_identity"] = [] {  // training-only noise layers pass through at inference
    return image_model("noise_identity", {4, 5, 3}, [](KerasTensor x) {
      x = GaussianNoise(GaussianNoiseOptions(0.5))->call(x);
      x = SpatialDropout2D(NoiseDropoutOptions(0.3))->call(x);
      x = Identity()->call(x);
      x = Flatten()->call(x);
      x = GaussianDropout(NoiseDropoutOptions(0.2))->call(x);
      return AlphaDropout(NoiseDropoutOptions(0.1))->call(x);
    });
  };
  m["repeat_vector"] = [] {  // (D) → (n, D), then a sequence's layers
    return image_model("repeat_vector", {6}, [](KerasTensor x) {
      x = RepeatVector(RepeatVectorOptions(3))->call(x);
      x = ActivityRegularization(ActivityRegularizationOptions().l1(0.01))->call(x);  // a training loss only
      x = SpatialDropout1D(NoiseDropoutOptions(0.5))->call(x);
      x = Dense(DenseOptions(4).activation("tanh"))->call(x);
      return Flatten()->call(x);
    });
  };
  m["global_pooling_keepdims_1d"] = [] {  // keepdims on images, and the 1-D layers on a sequence
    return image_model("global_pooling_keepdims_1d", {4, 5, 3}, [](KerasTensor x) {
      KerasTensor a = GlobalAveragePooling2D(GlobalPoolingOptions().keepdims(true))->call(x);
      KerasTensor b = GlobalMaxPooling2D(GlobalPoolingOptions().keepdims(true))->call(x);
      x = Flatten()->call(Concatenate()->call({a, b}));
      x = RepeatVector(RepeatVectorOptions(4))->call(x);
      KerasTensor m = GlobalMaxPooling1D()->call(Dense(DenseOptions(3).activation("tanh"))->call(x));
      return Concatenate()->call({m, GlobalAveragePooling1D()->call(x)});
    });
  };
  m["global_pooling1d_keepdims"] = [] {
    return image_model("global_pooling1d_keepdims", {5, 3}, [](KerasTensor x) {
      return GlobalAveragePooling1D(GlobalPoolingOptions().keepdims(true))->call(x);
    });
  };
  m["global_pooling3d"] = [] {  // volumes (D, H, W, C): the voxels' mean, channel dropout
    return image_model("global_pooling3d", {3, 4, 5, 2}, [](KerasTensor x) {
      x = SpatialDropout3D(NoiseDropoutOptions(0.3))->call(x);
      return GlobalAveragePooling3D()->call(x);
    });
  };
  m["global_pooling3d_keepdims"] = [] {  // the voxels' maximum, (1, 1, 1, C)
    return image_model("global_pooling3d_keepdims", {3, 4, 5, 2}, [](KerasTensor x) {
      return GlobalMaxPooling3D(GlobalPoolingOptions().keepdims(true))->call(x);
    });
  };
  m["adaptive_pooling2d_even"] = [] {  // 8 → 4 and 6 → 3: one AveragePool / MaxPool each
    return image_model("adaptive_pooling2d_even", {8, 6, 2}, [](KerasTensor x) {
      KerasTensor a = AdaptiveAveragePooling2D(AdaptivePooling2DOptions({4, 3}))->call(x);
      KerasTensor b = AdaptiveMaxPooling2D(AdaptivePooling2DOptions({2, 3}))->call(x);
      return Concatenate()->call({Flatten()->call(a), Flatten()->call(b)});
    });
  };
  m["adaptive_pooling2d_bins"] = [] {  // 7 → 3, 5 → 2 (overlapping bins) and 5 → 5: Slice + Reduce per bin
    return image_model("adaptive_pooling2d_bins", {7, 5, 2}, [](KerasTensor x) {
      KerasTensor a = AdaptiveAveragePooling2D(AdaptivePooling2DOptions({3, 2}))->call(x);
      KerasTensor b = AdaptiveMaxPooling2D(AdaptivePooling2DOptions({3, 5}))->call(x);
      return Concatenate()->call({Flatten()->call(a), Flatten()->call(b)});
    });
  };
  m["adaptive_pooling1d"] = [] {  // a sequence (14, 5): 14 → 7 (even), 14 → 4 and 14 → 5 (bins)
    return image_model("adaptive_pooling1d", {14, 5}, [](KerasTensor x) {
      KerasTensor a = AdaptiveAveragePooling1D(AdaptivePooling1DOptions(7))->call(x);
      KerasTensor b = AdaptiveMaxPooling1D(AdaptivePooling1DOptions(4))->call(x);
      KerasTensor c = AdaptiveAveragePooling1D(AdaptivePooling1DOptions(5))->call(x);
      KerasTensor d = AdaptiveMaxPooling1D(AdaptivePooling1DOptions(2))->call(x);
      return Concatenate(ConcatenateOptions().axis(1))->call({a, b, c, d});
    });
  };
  m["adaptive_pooling3d"] = [] {  // a volume (4, 6, 5, 2): (2, 3, 5) even, (3, 2, 2) bins
    return image_model("adaptive_pooling3d", {4, 6, 5, 2}, [](KerasTensor x) {
      KerasTensor a = AdaptiveMaxPooling3D(AdaptivePooling3DOptions({2, 3, 5}))->call(x);
      KerasTensor b = AdaptiveAveragePooling3D(AdaptivePooling3DOptions({3, 2, 2}))->call(x);
      KerasTensor c = AdaptiveAveragePooling3D(AdaptivePooling3DOptions({2, 2, 1}))->call(x);
      return Concatenate()->call({Flatten()->call(a), Flatten()->call(b), Flatten()->call(c)});
    });
  };
  m["dot"] = [] {  // Dot of sequences, vectors and mixed ranks, over the features and the steps
    return image_model("dot", {4, 6}, [](KerasTensor x) {
      KerasTensor a = Dense(DenseOptions(3))->call(x);
      KerasTensor b = Dense(DenseOptions(3).activation("tanh"))->call(x);
      KerasTensor fa = Flatten()->call(a), fb = Flatten()->call(b);                                      // (12)
      KerasTensor d1 = Dot(DotOptions(KerasAxes(2)))->call({a, b});                                      // (4, 4)
      KerasTensor d2 = Dot(DotOptions(KerasAxes({1, 1})))->call({a, b});                                 // (3, 3)
      KerasTensor d3 = Dot(DotOptions(KerasAxes(-1)))->call({fa, fb});                                   // (1)
      KerasTensor d4 = Dot(DotOptions(KerasAxes({2, 1})))->call({b, Dense(DenseOptions(3))->call(fa)});  // (4)
      KerasTensor d5 = Dot(DotOptions(KerasAxes({1, 2})))->call({Dense(DenseOptions(3))->call(fb), a});  // (4)
      return Concatenate()->call({Flatten()->call(d1), Flatten()->call(d2), d3, d4, d5});
    });
  };
  m["dot_normalize"] = [] {  // cosine similarities: Keras 3's ops.normalize on each input first
    return image_model("dot_normalize", {4, 6}, [](KerasTensor x) {
      KerasTensor a = Dense(DenseOptions(3))->call(x);
      KerasTensor b = Dense(DenseOptions(3).activation("tanh"))->call(x);
      KerasTensor d1 = Dot(DotOptions(KerasAxes({-1, 2})).normalize(true))->call({a, b});  // (4, 4)
      KerasTensor d2 = Dot(DotOptions(KerasAxes(1)).normalize(true))->call({a, b});        // (3, 3)
      KerasTensor d3 = Dot(DotOptions(KerasAxes(1)).normalize(true))->call({Flatten()->call(a), Flatten()->call(b)});
      return Concatenate()->call({Flatten()->call(d1), Flatten()->call(d2), d3});
    });
  };
  m["conv1d"] = [] {  // a 1-D CNN over a sequence: same (odd step at the end), strided valid, causal dilated
    return image_model("conv1d", {9, 3}, [](KerasTensor x) {
      x = Conv1D(Conv1DOptions(4, 4).padding("same").activation("relu"))->call(x);
      x = Conv1D(Conv1DOptions(5, 3).strides(2))->call(x);
      x = Conv1D(Conv1DOptions(2, 2).padding("causal").dilation_rate(2).use_bias(false).activation("tanh"))->call(x);
      return Flatten()->call(x);
    });
  };
  m["conv1d_depthwise_separable"] =
      [] {  // DepthwiseConv1D (m = 2, same, stride 2: the odd step after), SeparableConv1D
        return image_model("conv1d_depthwise_separable", {9, 3}, [](KerasTensor x) {
          x = DepthwiseConv1D(DepthwiseConv1DOptions(3).depth_multiplier(2).strides(2).padding("same"))->call(x);
          x = SeparableConv1D(SeparableConv1DOptions(4, 3).padding("same").activation("relu"))->call(x);
          return Flatten()->call(x);
        });
      };
  m["conv1d_transpose"] = [] {  // same with the odd step cropped at the end; valid with output_padding
    return image_model("conv1d_transpose", {5, 3}, [](KerasTensor x) {
      x = Conv1DTranspose(Conv1DTransposeOptions(4, 3).strides(2).padding("same").activation("relu"))->call(x);
      x = Conv1DTranspose(Conv1DTransposeOptions(2, 2).strides(2).output_padding(1))->call(x);
      return Flatten()->call(x);
    });
  };
  m["conv3d"] = [] {  // a volume (D, H, W, C): same strided (odd totals), valid dilated
    return image_model("conv3d", {5, 6, 7, 2}, [](KerasTensor x) {
      x = Conv3D(Conv3DOptions(3, 3).strides(2).padding("same").activation("relu"))->call(x);
      x = Conv3D(Conv3DOptions(2, {2, 1, 2}).dilation_rate({1, 1, 2}).use_bias(false))->call(x);
      return Flatten()->call(x);
    });
  };
  m["conv3d_transpose"] = [] {  // same with the odd crops at the end; valid
    return image_model("conv3d_transpose", {3, 4, 3, 2}, [](KerasTensor x) {
      x = Conv3DTranspose(Conv3DTransposeOptions(3, 3).strides(2).padding("same"))->call(x);
      x = Conv3DTranspose(Conv3DTransposeOptions(2, 2).activation("tanh"))->call(x);
      return Flatten()->call(x);
    });
  };
  m["dense_channels"] = [] {  // Dense over an image's channels (Keras 3, any rank): ConvNeXt's pointwise layers
    return image_model("dense_channels", {3, 4, 5}, [](KerasTensor x) {
      x = Dense(DenseOptions(6).activation("relu"))->call(x);
      return Dense(DenseOptions(2).activation("softmax"))->call(x);
    });
  };
  m["dense_sequence"] = [] {  // Dense over the last axis of a (steps, features) input
    return image_model("dense_sequence", {5, 6}, [](KerasTensor x) {
      x = Dense(DenseOptions(4).activation("tanh"))->call(x);
      x = Flatten()->call(x);
      return Dense(DenseOptions(3).activation("softmax"))->call(x);
    });
  };
  m["padding_cropping"] = [] {
    return image_model("padding_cropping", {6, 7, 2}, [](KerasTensor x) {
      x = ZeroPadding2D(ZeroPadding2DOptions(Edges2D(1, 2, 0, 3)))->call(x);
      return Cropping2D(Cropping2DOptions(Edges2D(2, 0, 1, 1)))->call(x);
    });
  };
  m["padding_cropping1d"] = [] {
    return image_model("padding_cropping1d", {6, 2}, [](KerasTensor x) {
      x = ZeroPadding1D(ZeroPadding1DOptions({1, 2}))->call(x);
      return Cropping1D(Cropping1DOptions({2, 0}))->call(x);
    });
  };
  m["padding_cropping3d"] = [] {
    return image_model("padding_cropping3d", {3, 4, 5, 2}, [](KerasTensor x) {
      x = ZeroPadding3D(ZeroPadding3DOptions({0, 1, 2, 0, 1, 3}))->call(x);
      return Cropping3D(Cropping3DOptions({1, 0, 0, 2, 2, 1}))->call(x);
    });
  };
  m["upsampling_nearest"] = [] {
    return image_model("upsampling_nearest", {4, 5, 2}, [](KerasTensor x) {
      return UpSampling2D(UpSampling2DOptions({2, 3}))->call(x);
    });
  };
  m["upsampling_bilinear"] = [] {
    return image_model("upsampling_bilinear", {4, 5, 2}, [](KerasTensor x) {
      return UpSampling2D(UpSampling2DOptions({3, 2}).interpolation("bilinear"))->call(x);
    });
  };
  m["upsampling1d"] = [] {  // each step repeated
    return image_model("upsampling1d", {4, 3},
                       [](KerasTensor x) { return UpSampling1D(UpSampling1DOptions(3))->call(x); });
  };
  m["upsampling3d"] = [] {  // each voxel repeated (nearest)
    return image_model("upsampling3d", {2, 3, 2, 2}, [](KerasTensor x) {
      return UpSampling3D(UpSampling3DOptions({2, 1, 3}))->call(x);
    });
  };
  m["reshape"] = [] {
    return image_model("reshape", {4, 6, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({6, 4, 2}))->call(x);
      x = Conv2D(Conv2DOptions(2, 1))->call(x);
      return Reshape(ReshapeOptions({-1, 8}))->call(x);
    });
  };
  m["embedding"] = [] {  // indices from [0, 1) inputs: Rescaling ×5 (truncated to 0..4); (H, W) → an image
    return image_model("embedding", {2, 3}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(5.0))->call(x);
      x = Embedding(EmbeddingOptions(5, 3))->call(x);  // (2, 3) → (2, 3, 3), held (N, 3, 2, 3)
      return Dense(DenseOptions(2))->call(GlobalAveragePooling2D()->call(x));
    });
  };
  m["simple_rnn"] = [] {  // an image's rows as a sequence: the sequence out and the last step
    return image_model("simple_rnn", {4, 5, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({4, 10}))->call(x);
      x = SimpleRNN(SimpleRNNOptions(3).return_sequences(true))->call(x);
      return SimpleRNN(SimpleRNNOptions(2).use_bias(false))->call(x);
    });
  };
  m["lstm"] = [] {  // an image's rows as a sequence: the sequence out and the last step
    return image_model("lstm", {4, 5, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({4, 10}))->call(x);
      x = LSTM(LSTMOptions(3).return_sequences(true))->call(x);
      return LSTM(LSTMOptions(2).use_bias(false))->call(x);
    });
  };
  m["gru"] = [] {  // reset_after false with the sequence out, then reset_after (linear_before_reset) last step
    return image_model("gru", {4, 5, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({4, 10}))->call(x);
      x = GRU(GRUOptions(3).reset_after(false).return_sequences(true))->call(x);
      return GRU(GRUOptions(2))->call(x);
    });
  };
  // Bidirectional over each recurrent class and merge mode (TensorFlow.js's GRU: reset_after false).
  m["bidirectional"] = [] {
    return image_model("bidirectional", {4, 5, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({4, 10}))->call(x);
      x = Bidirectional(BidirectionalOptions(LSTM(LSTMOptions(3).return_sequences(true))))->call(x);  // (4, 6)
      x = Bidirectional(
              BidirectionalOptions(GRU(GRUOptions(2).reset_after(false).return_sequences(true))).merge_mode("mul"))
              ->call(x);  // (4, 2)
      return Bidirectional(BidirectionalOptions(SimpleRNN(SimpleRNNOptions(2))).merge_mode("sum"))->call(x);
    });
  };
  m["bidirectional_ave"] = [] {  // GRU reset_after (linear_before_reset), the last steps averaged
    return image_model("bidirectional_ave", {4, 5, 2}, [](KerasTensor x) {
      x = Reshape(ReshapeOptions({4, 10}))->call(x);
      return Bidirectional(BidirectionalOptions(GRU(GRUOptions(3))).merge_mode("ave"))->call(x);
    });
  };
  // TimeDistributed over a sequence of images: Conv2D, MaxPooling2D, Flatten, then Dense per step.
  m["masking"] = [] {  // Masking's values (steps of zeros stay zeros); Dense passes the mask on, unused
    return image_model("masking", {4, 3}, [](KerasTensor x) {
      x = Masking(MaskingOptions().mask_value(0.5))->call(x);
      return Dense(DenseOptions(2))->call(x);
    });
  };
  m["time_distributed"] = [] {
    return image_model("time_distributed", {3, 6, 6, 2}, [](KerasTensor x) {
      x = TimeDistributed(TimeDistributedOptions(Conv2D(Conv2DOptions(3, 3).activation("relu"))))->call(x);
      x = TimeDistributed(TimeDistributedOptions(MaxPooling2D(MaxPooling2DOptions(2))))->call(x);  // (3, 2, 2, 3)
      x = TimeDistributed(TimeDistributedOptions(Flatten()))->call(x);                             // (3, 12)
      return TimeDistributed(TimeDistributedOptions(Dense(DenseOptions(4))))->call(x);             // (3, 4)
    });
  };
  m["embedding_image"] = [] {  // an image's indices (H, W, C) → (H, W, C, D), in Keras's order
    return image_model("embedding_image", {2, 3, 2}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(4.0))->call(x);
      x = Embedding(EmbeddingOptions(4, 2))->call(x);  // (2, 3, 2, 2)
      return Reshape(ReshapeOptions({2, 3, 4}))->call(x);
    });
  };
  m["attention"] = [] {  // MultiHeadAttention: self (causal) and cross (key, value_dim, output_shape, no bias);
                         // Attention dot scaled and concat causal; AdditiveAttention with a key
    return image_model("attention", {5, 4}, [](KerasTensor x) {
      KerasTensor a = MultiHeadAttention(MultiHeadAttentionOptions(2, 3).use_causal_mask(true))->call({x, x});
      KerasTensor v = Dense(DenseOptions(6))->call(x);
      KerasTensor k = Dense(DenseOptions(3))->call(x);
      KerasTensor b =
          MultiHeadAttention(MultiHeadAttentionOptions(2, 3).value_dim(2).output_shape(KerasAxes({5})).use_bias(false))
              ->call({a, v, k});                                                    // (5, 5)
      KerasTensor c = Attention(AttentionOptions().use_scale(true))->call({x, a});  // (5, 4)
      KerasTensor d = Attention(AttentionOptions().score_mode("concat").use_causal_mask(true))->call({a, x});
      KerasTensor e = AdditiveAttention()->call({x, v, Dense(DenseOptions(4))->call(x)});  // (5, 6)
      return Concatenate()->call({b, c, d, e});                                            // (5, 19)
    });
  };
  m["group_query_attention"] = [] {  // GroupQueryAttention: grouped (4 query heads on 2) causal self-attention,
                                     // multi-query (3 on 1) cross attention with a key, no biases
    return image_model("group_query_attention", {5, 4}, [](KerasTensor x) {
      KerasTensor a = GroupQueryAttention(GroupQueryAttentionOptions(3, 4, 2).use_causal_mask(true))->call({x, x});
      KerasTensor v = Dense(DenseOptions(4))->call(x);
      KerasTensor k = Dense(DenseOptions(3))->call(x);
      KerasTensor b = GroupQueryAttention(GroupQueryAttentionOptions(2, 3, 1).use_bias(false))->call({a, v, k});
      return Concatenate()->call({a, b});  // (5, 8)
    });
  };
  m["einsum_dense"] = [] {  // Keras's forms: a sequence → an image, an image in, "..." on the left and right
    using O = std::vector<std::optional<int64_t>>;
    return image_model("einsum_dense", {5, 3}, [](KerasTensor x) {
      x = EinsumDense(EinsumDenseOptions("abc,cde->abde", O{std::nullopt, 2, 3}).bias_axes("de"))->call(x);
      x = EinsumDense(EinsumDenseOptions("abcd,cde->abe", O{std::nullopt, 4}).bias_axes("e").activation("relu"))
              ->call(x);                                                                  // (5, 2, 3) → (5, 4)
      x = EinsumDense(EinsumDenseOptions("ab...,bc->ac...", 2).bias_axes("c"))->call(x);  // (5, 4) → (2, 4)
      return EinsumDense(EinsumDenseOptions("...b,bc->...c", 3))->call(x);                // (2, 3)
    });
  };
  m["permute"] = [] {
    return image_model("permute", {4, 6, 2}, [](KerasTensor x) {
      x = Permute(PermuteOptions({2, 3, 1}))->call(x);  // (4, 6, 2) → (6, 2, 4)
      x = Conv2D(Conv2DOptions(3, 1))->call(x);
      x = Reshape(ReshapeOptions({-1, 3}))->call(x);    // (12, 3)
      return Permute(PermuteOptions({2, 1}))->call(x);  // (3, 12)
    });
  };
  m["activations"] = [] {
    return image_model("activations", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      KerasTensor a = Activation("tanh")->call(x);
      KerasTensor b = LeakyReLU(LeakyReLUOptions().alpha(0.2))->call(x);
      KerasTensor c = ELU(ELUOptions().alpha(0.7))->call(x);
      KerasTensor d = ReLU(ReLUOptions().max_value(0.5))->call(x);
      KerasTensor e = ReLU(ReLUOptions().negative_slope(0.1))->call(x);
      KerasTensor f = Softmax(SoftmaxOptions().axis(1))->call(x);
      KerasTensor g = Activation("softmax")->call(x);
      return Concatenate()->call({a, b, c, d, e, f, g});
    });
  };
  // Every activation name (layers/activation_fn.h) as an Activation layer, one model each, on [-8, 8)
  // (exponential on [-1, 1): its values stay within the tests' absolute 1e-5 in float32).
  for (const std::string& a : activation_names()) {
    m["activation_" + a] = [a] {
      return image_model("activation_" + a, {3, 4, 5}, [a](KerasTensor x) {
        const double half_range = a == "exponential" ? 1.0 : 8.0;
        x = Rescaling(RescalingOptions(2.0 * half_range).offset(-half_range))->call(x);
        return Activation(a)->call(x);
      });
    };
  }
  m["prelu_channels"] = [] {
    return image_model("prelu_channels", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      return PReLU(PReLUOptions().shared_axes(Shape{1, 2}))->call(x);  // one alpha per channel: (1, 1, C)
    });
  };
  m["prelu_full"] = [] {
    return image_model("prelu_full", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      x = PReLU()->call(x);                                         // alpha (H, W, C)
      return PReLU(PReLUOptions().shared_axes(Shape{3}))->call(x);  // alpha (H, W, 1)
    });
  };
  m["prelu_vector"] = [] {
    return image_model("prelu_vector", {2, 3, 2}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      return PReLU()->call(Flatten()->call(x));  // alpha (12)
    });
  };
  m["thresholded_relu"] = [] {
    return image_model("thresholded_relu", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(4.0).offset(-2.0))->call(x);
      KerasTensor a = ThresholdedReLU()->call(x);
      KerasTensor b = ThresholdedReLU(ThresholdedReLUOptions().theta(0.25))->call(x);
      return Concatenate()->call({a, b});
    });
  };
  m["relu_capped_leaky"] = [] {
    return image_model("relu_capped_leaky", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      return ReLU(ReLUOptions().max_value(0.6).negative_slope(0.2))->call(x);
    });
  };
  m["relu_threshold"] = [] {
    return image_model("relu_threshold", {3, 4, 5}, [](KerasTensor x) {
      x = Rescaling(RescalingOptions(2.0).offset(-1.0))->call(x);
      return ReLU(ReLUOptions().max_value(0.6).negative_slope(0.2).threshold(0.1))->call(x);
    });
  };
  m["batch_normalization"] = [] {
    return image_model("batch_normalization", {5, 4, 3}, [](KerasTensor x) {
      x = BatchNormalization(BatchNormalizationOptions().epsilon(0.01))->call(x);
      return BatchNormalization(BatchNormalizationOptions().center(false).scale(false))->call(x);
    });
  };
  m["layer_normalization_channels"] = [] {
    return image_model("layer_normalization_channels", {3, 4, 6}, [](KerasTensor x) {
      return LayerNormalization()->call(x);  // Keras axis -1: the channels, tensor axis 1
    });
  };
  m["layer_normalization_all"] = [] {
    return image_model("layer_normalization_all", {3, 4, 6}, [](KerasTensor x) {
      return LayerNormalization(LayerNormalizationOptions().axis(KerasAxes({1, 2, 3})).epsilon(1e-4))->call(x);
    });
  };
  m["layer_normalization_vector"] = [] {
    return image_model("layer_normalization_vector", {2, 3, 2}, [](KerasTensor x) {
      x = Flatten()->call(x);
      return LayerNormalization(LayerNormalizationOptions().center(false))->call(x);
    });
  };
  m["shared_layer"] = [] {
    return image_model("shared_layer", {5, 5, 3}, [](KerasTensor x) {
      auto conv = Conv2D(Conv2DOptions(3, 3).padding("same").activation("tanh"));
      return conv->call(conv->call(x));  // one layer, two nodes: its weights once in the file
    });
  };
  m["shared_sequence_layers"] = [] {  // Conv1D at 9 and 4 steps, MaxPooling1D at 9 and 8, UpSampling1D at 9 and 4
    return image_model("shared_sequence_layers", {9, 3}, [](KerasTensor x) {
      auto conv = Conv1D(Conv1DOptions(3, 3).padding("same").activation("tanh"));
      auto pool = MaxPooling1D();
      auto up = UpSampling1D();
      KerasTensor a = conv->call(x);                                                         // (9, 3)
      KerasTensor c = up->call(conv->call(pool->call(a)));                                   // (4, 3) → (8, 3)
      return Concatenate(ConcatenateOptions().axis(1))->call({up->call(a), pool->call(c)});  // (18 + 4, 3)
    });
  };
  // Resizing up and down, bilinear and nearest, the crop and pad boxes of Keras's aspect ratio.
  m["resizing_bilinear"] = [] {
    return image_model("resizing_bilinear", {5, 7, 2}, [](KerasTensor x) {
      KerasTensor up = Resizing(ResizingOptions(9, 11))->call(x);
      return Concatenate()->call({Flatten()->call(up), Flatten()->call(Resizing(ResizingOptions(3, 4))->call(x))});
    });
  };
  m["resizing_nearest"] = [] {
    return image_model("resizing_nearest", {5, 7, 2}, [](KerasTensor x) {
      KerasTensor up = Resizing(ResizingOptions(9, 11).interpolation("nearest"))->call(x);
      KerasTensor down = Resizing(ResizingOptions(3, 4).interpolation("nearest"))->call(x);
      return Concatenate()->call({Flatten()->call(up), Flatten()->call(down)});
    });
  };
  m["resizing_crop"] = [] {
    return image_model("resizing_crop", {5, 7, 2}, [](KerasTensor x) {
      return Resizing(ResizingOptions(4, 4).crop_to_aspect_ratio(true))->call(x);
    });
  };
  // The weight-matrix methods (MatMul by constant matrices): up, down, non-integer ratios, antialias, crop
  // and pad.
  m["resizing_kernels"] = [] {
    return image_model("resizing_kernels", {5, 7, 2}, [](KerasTensor x) {
      std::vector<KerasTensor> parts;
      const auto add = [&](ResizingOptions o) { parts.push_back(Flatten()->call(Resizing(o)->call(x))); };
      add(ResizingOptions(9, 11).interpolation("bicubic"));
      add(ResizingOptions(3, 4).interpolation("area"));
      add(ResizingOptions(4, 13).interpolation("lanczos3"));
      add(ResizingOptions(3, 4).interpolation("lanczos5").antialias(true));
      add(ResizingOptions(8, 2).interpolation("gaussian").antialias(true));
      add(ResizingOptions(6, 5).interpolation("mitchellcubic"));
      add(ResizingOptions(2, 3).antialias(true));  // bilinear → the triangle kernel
      add(ResizingOptions(3, 3).interpolation("bicubic").antialias(true).crop_to_aspect_ratio(true));
      add(ResizingOptions(3, 8).interpolation("area").pad_to_aspect_ratio(true).fill_value(0.5));
      return Concatenate()->call(parts);
    });
  };
  m["normalization"] = [] {  // per channel, as Keras's default
    return image_model("normalization", {3, 4, 2},
                       [](KerasTensor x) { return Normalization()->call(conv(x, 3, 1, 1, "valid")); });
  };
  m["normalization_axes"] = [] {  // adapted per (W, C) index of an image, a given scalar one inverted
    return image_model("normalization_axes", {3, 4, 2}, [](KerasTensor x) {
      KerasTensor y = Normalization(NormalizationOptions().axis(KerasAxes({2, 3})))->call(x);
      return Normalization(
                 NormalizationOptions().axis(KerasAxes(std::vector<int64_t>{})).mean(0.5).variance(4.0).invert(true))
          ->call(y);
    });
  };
  m["random_flip"] = [] {  // inference: the input passes through
    return image_model("random_flip", {4, 5, 2}, [](KerasTensor x) {
      return conv(RandomFlip(RandomFlipOptions().mode("horizontal"))->call(x), 2, 3, 1, "same");
    });
  };
  m["augmentation"] = [] {  // inference: each passes its input through
    return image_model("augmentation", {5, 6, 3}, [](KerasTensor x) {
      x = RandomRotation(RandomRotationOptions(0.2))->call(x);
      x = RandomZoom(RandomZoomOptions(0.2))->call(x);
      x = RandomTranslation(RandomTranslationOptions(0.1, 0.1))->call(x);
      x = RandomShear(RandomShearOptions().x_factor(0.2))->call(x);
      x = RandomContrast(RandomContrastOptions(0.3))->call(x);
      x = RandomBrightness(RandomBrightnessOptions(0.2).value_range({0.0, 1.0}))->call(x);
      x = RandomGrayscale()->call(x);
      x = RandomHue(RandomHueOptions(0.2))->call(x);
      x = RandomSaturation(RandomSaturationOptions(0.3))->call(x);
      x = RandomColorJitter(RandomColorJitterOptions().hue_factor(KerasFactor(0.1)))->call(x);
      x = RandomErasing()->call(x);
      x = MixUp()->call(x);
      x = CutMix()->call(x);
      x = RandomColorDegeneration(RandomColorDegenerationOptions(0.5))->call(x);
      x = RandomSharpness(RandomSharpnessOptions(0.5))->call(x);
      x = RandomPosterization(RandomPosterizationOptions(4))->call(x);
      x = Solarization(SolarizationOptions().addition_factor(0.2).threshold_factor(0.5))->call(x);
      x = Equalization()->call(x);
      x = RandAugment()->call(x);
      return conv(x, 2, 3, 1, "same");
    });
  };
  m["auto_contrast"] = [] {  // active in inference: per image and channel min/max stretch (value_range [0, 1])
    return image_model("auto_contrast", {5, 6, 3}, [](KerasTensor x) {
      return conv(AutoContrast(AutoContrastOptions().value_range({0.0, 1.0}))->call(x), 2, 3, 1, "same");
    });
  };
  m["random_crop"] = [] {  // inference: smart_resize (Resizing with crop_to_aspect_ratio)
    return image_model("random_crop", {6, 9, 2}, [](KerasTensor x) {
      return conv(RandomCrop(RandomCropOptions(4, 4))->call(x), 2, 3, 1, "same");
    });
  };
  m["center_crop"] = [] {  // the window of a larger image (odd rows left over) and smart_resize of a smaller one
    return image_model("center_crop", {5, 7, 2}, [](KerasTensor x) {
      KerasTensor window = CenterCrop(CenterCropOptions(2, 4))->call(x);
      KerasTensor resized = CenterCrop(CenterCropOptions(6, 6))->call(x);
      return Concatenate()->call({Flatten()->call(window), Flatten()->call(resized)});
    });
  };
  m["resizing_pad"] = [] {
    return image_model("resizing_pad", {5, 7, 2}, [](KerasTensor x) {
      return Resizing(ResizingOptions(3, 8).interpolation("nearest").pad_to_aspect_ratio(true).fill_value(0.5))
          ->call(x);
    });
  };
  m["merges"] = [] {
    return image_model("merges", {4, 4, 3}, [](KerasTensor x) {
      KerasTensor a = conv(x, 3, 1, 1, "valid");
      KerasTensor b = conv(x, 3, 3, 1, "same");
      KerasTensor c = conv(x, 3, 1, 1, "valid", "sigmoid");
      KerasTensor add = Add()->call({a, b, c});
      KerasTensor sub = Subtract()->call({a, b});
      KerasTensor mul = Multiply()->call({a, b, c});
      KerasTensor avg = Average()->call({a, b, c});
      KerasTensor mx = Maximum()->call({a, b, c});
      KerasTensor mn = Minimum()->call({a, b});
      KerasTensor h = Concatenate(ConcatenateOptions().axis(1))->call({add, sub});  // along H
      KerasTensor w = Concatenate(ConcatenateOptions().axis(2))->call({mul, avg});  // along W
      KerasTensor c6 = Concatenate()->call({mx, mn});                               // along C
      return Concatenate()->call({Flatten()->call(h), Flatten()->call(w), Flatten()->call(c6)});
    });
  };
  return m;
}

}  // namespace torchfit::testing
