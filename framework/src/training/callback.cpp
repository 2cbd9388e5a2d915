#include <torchfit/training/callback.h>

#include <algorithm>

#include <torchfit/error.h>
#include <torchfit/training/trainer.h>

namespace torchfit {

Trainer& Callback::trainer() const {
  if (!trainer_) throw Error("callback used outside Trainer::fit (no trainer set)");
  return *trainer_;
}

CallbackList::CallbackList(std::vector<CallbackPtr> callbacks, Trainer* trainer, const FitParams& params)
    : callbacks_(std::move(callbacks)) {
  for (auto& cb : callbacks_) {
    if (!cb) throw ConfigError("fit: callbacks holds a null callback");
  }
  // Data-parallel: rank 0 alone prints and writes.
  if (trainer && trainer->rank() != 0) {
    callbacks_.erase(
        std::remove_if(callbacks_.begin(), callbacks_.end(), [](const CallbackPtr& cb) { return cb->chief_only(); }),
        callbacks_.end());
  }
  for (auto& cb : callbacks_) {
    cb->set_trainer(trainer);
    cb->set_params(params);
  }
}

void CallbackList::on_train_begin(const Logs& logs) {
  for (auto& cb : callbacks_) cb->on_train_begin(logs);
}

void CallbackList::on_train_end(const Logs& logs) {
  for (auto& cb : callbacks_) cb->on_train_end(logs);
}

void CallbackList::on_epoch_begin(int epoch, const Logs& logs) {
  for (auto& cb : callbacks_) cb->on_epoch_begin(epoch, logs);
}

void CallbackList::on_epoch_end(int epoch, const Logs& logs) {
  for (auto& cb : callbacks_) cb->on_epoch_end(epoch, logs);
}

void CallbackList::on_train_batch_end(int64_t batch, const Logs& logs) {
  for (auto& cb : callbacks_) cb->on_train_batch_end(batch, logs);
}

void CallbackList::on_train_error(const std::string& message) noexcept {
  for (auto& cb : callbacks_) {
    try {
      cb->on_train_error(message);
    } catch (...) {  // keep the original error
    }
  }
}

}  // namespace torchfit
