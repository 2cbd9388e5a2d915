#pragma once
// train_cnn's run: data, model, callbacks, fit, timing report.
#include "args.h"

namespace train_cnn {

/// Runs the experiment `a` describes; returns the exit status (0 done; 128 + the signal's number when
/// interrupted: 130 SIGINT, 143 SIGTERM, 129 SIGHUP).
/// Errors: torchfit::apps::UsageError for flag values that do not fit the data or checkpoint, and
/// what the library throws.
int run(Args& a);

}  // namespace train_cnn
