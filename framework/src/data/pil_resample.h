#pragma once
// Pillow's Image.resize for 8-bit images (what Keras's load_img calls), reimplemented: separable
// convolution, horizontal pass then vertical pass, 8-bit intermediate, fixed-point coefficients
// (22 fractional bits), filter support scaled by the reduction factor when downscaling
// (antialiasing), RGBA premultiplied by alpha while resampling. Behaviour checked against
// Pillow 9.4 (scripts/keras_oracle.py, tests/data/golden/resize_*.npy).
#include <cstdint>

namespace torchfit::data {

/// Pillow's resampling filters (Image.BOX, BILINEAR, HAMMING, BICUBIC with a = −0.5, LANCZOS with
/// a = 3); their supports are 0.5, 1, 1, 2 and 3 input pixels, times in/out when downscaling.
enum class PilFilter { box, bilinear, hamming, bicubic, lanczos };

/// Resizes the (h, w, c) uint8 image `in` to (out_h, out_w, c) into `out` exactly as Pillow 9.4's
/// Image.resize((out_w, out_h), filter) of the same image in mode L (c = 1), RGB (c = 3) or RGBA
/// (c = 4): a 4-channel image is premultiplied by its alpha (channel 3) for the resample and divided
/// again afterwards, as Pillow's RGBA → RGBa → RGBA; any other channel count is resampled channel by
/// channel (no Keras colour mode has 2). A pass whose size does not change is skipped, as in Pillow.
/// All sizes must be ≥ 1 (not checked here); `in` and `out` must not overlap.
void pil_resample(const uint8_t* in, int h, int w, int c, uint8_t* out, int out_h, int out_w, PilFilter filter);

}  // namespace torchfit::data
