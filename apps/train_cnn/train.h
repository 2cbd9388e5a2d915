#pragma once
// train_cnn's run: data, model, callbacks, fit, timing report.
#include "args.h"

namespace train_cnn {

/// Runs the experiment `a` describes; returns the exit status (0 done, 130 interrupted).
/// Errors: torchfit::apps::UsageError for flag values that do not fit the data or checkpoint, and
/// what the library throws.
int run(Args& a);

}  // namespace train_cnn
