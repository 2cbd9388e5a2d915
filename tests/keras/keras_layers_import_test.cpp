// Keras files of the layers beyond 2-D images: Conv1D, GroupNormalization, SpatialDropout1D, Dense over a
// sequence and over an image's channels, PReLU, UnitNormalization, GlobalMaxPooling1D, GaussianNoise, swish
// and gelu, RepeatVector, AlphaDropout, RMSNormalization, Embedding, EinsumDense, the 1-D and 3-D
// convolution, pooling, padding, cropping and up-sampling layers, SpatialDropout3D, GlobalMaxPooling3D,
// GlobalAveragePooling3D, Resizing, AdaptiveAveragePooling1D/2D/3D, AdaptiveMaxPooling1D/2D/3D,
// ActivityRegularization and Dot. tf.keras 2 .h5 and Keras 3 .keras files written with h5py
// (tests/keras/keras_layers_fixtures.py), loaded and run against that script's float64 NumPy forward pass
// written from Keras's layer definitions.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <torchfit/keras/keras_import.h>

#include "support/keras_fixture_suite.h"

namespace torchfit {
namespace keras_layers_import_test {

using testing::nchw;
using testing::npy_tensor;

class KerasLayersImport : public testing::KerasFixtureSuite<KerasLayersImport> {
 public:
  static constexpr const char* kScript = "tests/keras/keras_layers_fixtures.py";
  static constexpr const char* kTag = "keras_layers_import";

 protected:
  // The model file `stem` + `ext`, in inference mode, gives the reference probabilities within 1e-5.
  static void expect_outputs(const std::string& stem, const std::string& ext) {
    SCOPED_TRACE(stem + ext);
    Model model = keras::load_keras_model(file(stem + ext));
    model->eval();
    torch::NoGradGuard no_grad;
    const at::Tensor got = model->forward(nchw(npy_tensor(file(stem + ".input.npy"))));
    const at::Tensor want = npy_tensor(file(stem + ".expected.npy"));
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_LT((got - want).abs().max().item<double>(), 1e-5) << got << "\n" << want;
  }
};

TEST_F(KerasLayersImport, SequenceModelMatchesNumpyFromBothFormats) {
  expect_outputs("sequence", ".h5");
  expect_outputs("sequence", ".keras");
}

TEST_F(KerasLayersImport, ImageModelWithDenseOverChannelsMatchesNumpyFromBothFormats) {
  expect_outputs("image", ".h5");
  expect_outputs("image", ".keras");
}

TEST_F(KerasLayersImport, Keras3RmsNormalizationMatchesNumpy) { expect_outputs("rms", ".keras"); }

TEST_F(KerasLayersImport, EinsumDenseModelMatchesNumpyFromBothFormats) {
  expect_outputs("einsum", ".h5");
  expect_outputs("einsum", ".keras");
}

TEST_F(KerasLayersImport, EmbeddingModelMatchesNumpyFromBothFormats) {
  expect_outputs("embedding", ".h5");
  expect_outputs("embedding", ".keras");
}

// SimpleRNN (go_backwards with the sequence out, relu with the last step): Keras 3's weights are its cell's.
TEST_F(KerasLayersImport, SimpleRNNModelMatchesNumpyFromBothFormats) {
  expect_outputs("simple_rnn", ".h5");
  expect_outputs("simple_rnn", ".keras");
}

// LSTM (go_backwards, the sequence out; the fused kernel), GRU reset_after false (the step loop) and
// GRU relu reset_after (the loop): Keras 3's weights are the cells'.
TEST_F(KerasLayersImport, LstmAndGruModelMatchesNumpyFromBothFormats) {
  expect_outputs("lstm_gru", ".h5");
  expect_outputs("lstm_gru", ".keras");
}

// TimeDistributed (Conv2D relu, MaxPooling2D, Flatten per step) and Bidirectional (LSTM with the sequence
// concatenated, GRU reset_after summed): tf.keras 2's nested "layer" and its weight names
// (bi/forward_lstm/lstm_cell/kernel:0), Keras 3's forward and backward layers and their weights
// (layers/bidirectional/forward_layer/cell/vars, layers/time_distributed/layer/vars).
TEST_F(KerasLayersImport, TimeDistributedAndBidirectionalModelMatchesNumpyFromBothFormats) {
  expect_outputs("wrappers", ".h5");
  expect_outputs("wrappers", ".keras");
}

// Conv1DTranspose, SeparableConv1D, DepthwiseConv1D, MaxPooling1D, AveragePooling1D (same), ZeroPadding1D,
// Cropping1D, UpSampling1D.
TEST_F(KerasLayersImport, SequenceConvolutionsAndWindowsMatchNumpyFromBothFormats) {
  expect_outputs("sequence_conv", ".h5");
  expect_outputs("sequence_conv", ".keras");
}

// Conv3D (same, stride 2), Conv3DTranspose, MaxPooling3D, ZeroPadding3D, Cropping3D, UpSampling3D,
// AveragePooling3D (same), SpatialDropout3D, GlobalMaxPooling3D.
TEST_F(KerasLayersImport, VolumeModelMatchesNumpyFromBothFormats) {
  expect_outputs("volume", ".h5");
  expect_outputs("volume", ".keras");
}

// Keras 3 only: Resizing, AdaptiveAveragePooling2D, ActivityRegularization, Dot (normalize).
TEST_F(KerasLayersImport, Keras3ResizingAdaptivePoolingAndDotMatchNumpy) { expect_outputs("keras3_image", ".keras"); }

// SeparableConv1D (same), DepthwiseConv1D (depth_multiplier 2, stride 2), MaxPooling1D (same, stride 2, a
// pad on each side of an odd length), AveragePooling1D (same, stride 2: a last window of one step),
// ZeroPadding1D, Cropping1D, UpSampling1D into a Flatten (every step's position reaches the Dense).
TEST_F(KerasLayersImport, SequenceSamePaddingAndStridesMatchNumpyFromBothFormats) {
  expect_outputs("sequence_nd", ".h5");
  expect_outputs("sequence_nd", ".keras");
}

// Conv3D (same, stride 2: odd pad after on 6), Conv3DTranspose (same, kernel (2, 3, 3), strides (1, 2, 2)),
// MaxPooling3D (same, stride 2 on odd sizes), UpSampling3D (2, 1, 2), AveragePooling3D (valid, strides
// (2, 1, 3)), a Flatten of the volume, GlobalAveragePooling3D and GlobalMaxPooling3D concatenated.
TEST_F(KerasLayersImport, VolumeSamePaddingAndGlobalPoolsMatchNumpyFromBothFormats) {
  expect_outputs("volume_same", ".h5");
  expect_outputs("volume_same", ".keras");
}

// Dot over the channels (axes -1, normalize true) and over the steps (axes [1, 1], normalize false) of two
// sequence branches, ActivityRegularization (l1 and l2; identity at inference); both classes are tf.keras 2's too.
TEST_F(KerasLayersImport, DotAndActivityRegularizationMatchNumpyFromBothFormats) {
  expect_outputs("merge", ".h5");
  expect_outputs("merge", ".keras");
}

// Keras 3 only: AdaptiveAveragePooling1D/2D/3D and AdaptiveMaxPooling1D/2D/3D, sizes that divide unevenly.
TEST_F(KerasLayersImport, Keras3AdaptivePooling1D2D3DMatchesNumpy) { expect_outputs("adaptive", ".keras"); }

// RandomFlip (the input at inference), CenterCrop and Normalization (adapted, with Keras's int64 count, and
// given) from a Keras 3 file.
TEST_F(KerasLayersImport, Keras3PreprocessingLayersMatchNumpy) { expect_outputs("keras3_preprocessing", ".keras"); }
TEST_F(KerasLayersImport, TfKeras2PreprocessingLayersMatchNumpy) { expect_outputs("tf2_preprocessing", ".h5"); }

// Every augmentation layer (RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomShear,
// RandomContrast, RandomBrightness, RandomGrayscale; tf.keras 2 lacks the last two and Shear) with Keras's
// configs loads and is the identity at inference; Rescaling with an offset and a bilinear Resizing follow.
TEST_F(KerasLayersImport, Keras3AugmentationLayersLoadAndPassTheImageAtInference) {
  expect_outputs("keras3_augmentation", ".keras");
}
TEST_F(KerasLayersImport, TfKeras2AugmentationLayersLoadAndPassTheImageAtInference) {
  expect_outputs("tf2_augmentation", ".h5");
}

}  // namespace keras_layers_import_test
}  // namespace torchfit
