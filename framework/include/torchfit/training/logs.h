#pragma once
/// @file logs.h
/// Logs — the name → value maps fit() passes to callbacks and returns in History (Keras `logs` dicts).
#include <map>
#include <string>

namespace torchfit {

/// Metric name → value ("loss", "categorical_accuracy", "val_loss", "lr", …); callback.h lists the keys
/// of each hook.
using Logs = std::map<std::string, double>;

}  // namespace torchfit
