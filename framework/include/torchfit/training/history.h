#pragma once
/// @file history.h
/// History — per-epoch metrics returned by fit(), and the callback that records them
/// (keras.callbacks.History).
#include <map>
#include <string>
#include <vector>

#include <torchfit/training/callback.h>
#include <torchfit/training/logs.h>

namespace torchfit {

/// `history["loss"][e]` is the mean training loss of the e-th epoch run (epochs as run, in order);
/// `epoch[e]` is that epoch's 0-based index.
struct History {
  std::vector<int> epoch;
  std::map<std::string, std::vector<double>> history;
  /// The latest value of `key`. Errors: std::out_of_range naming the key.
  double last(const std::string& key) const;
};

/// Records every epoch's logs into a History; fit() adds one last in its callback list and returns
/// its history.
class HistoryRecorder : public Callback {
 public:
  void on_train_begin(const Logs& logs) override { history_ = {}; }
  void on_epoch_end(int epoch, const Logs& logs) override;
  const History& history() const { return history_; }

 private:
  History history_;
};

}  // namespace torchfit
