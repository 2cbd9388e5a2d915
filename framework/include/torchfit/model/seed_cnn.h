#pragma once
/// @file seed_cnn.h
/// The article's CNN (the model train_cnn trains by default).
#include <torchfit/model/sequential.h>

namespace torchfit {

/// Conv2D 32 3×3 relu → MaxPooling2D 2 → Conv2D 64 3×3 relu → MaxPooling2D 2 → Flatten → Dense 512 relu →
/// Dropout 0.2 → Dense `dense2_units` relu → Dropout 0.2 → Dense `classes` softmax.
/// Input (size, size, 3) in Keras order, i.e. tensors (N, 3, size, size). At size 150, 8 classes and
/// dense2_units 64 it has 42,520,584 parameters (the article's summary; its listing says 256 units).
/// Errors: ConfigError when size is too small for the two conv/pool stages (size < 10) or counts ≤ 0.
Sequential seed_cnn(int64_t size = 150, int64_t classes = 8, int64_t dense2_units = 64, int64_t channels = 3);

}  // namespace torchfit
