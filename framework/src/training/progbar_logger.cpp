#include <torchfit/training/progbar_logger.h>

#include <iostream>

#include <torchfit/training/trainer.h>

namespace torchfit {

ProgbarLogger::ProgbarLogger(ProgbarLoggerOptions options) : options_(std::move(options)) {}

Progbar::Values ProgbarLogger::values(const Logs& logs, bool with_validation) const {
  std::vector<std::string> names = {"loss"};
  for (const auto& m : trainer().metric_names()) names.push_back(m);
  Progbar::Values out;
  for (const auto& n : names) out.emplace_back(n, logs.at(n));
  if (!with_validation) return out;
  for (const auto& n : names) {
    auto it = logs.find("val_" + n);
    if (it != logs.end()) out.emplace_back(it->first, it->second);
  }
  return out;
}

void ProgbarLogger::on_epoch_begin(int epoch, const Logs&) {
  const int verbose = params().verbose;
  if (verbose <= 0) return;
  std::ostream& out = options_.out() ? *options_.out() : std::cout;
  if (params().epochs > 1) out << "Epoch " << epoch + 1 << "/" << params().epochs << "\n" << std::flush;
  const bool dynamic = options_.dynamic() ? *options_.dynamic() : is_terminal(out);
  bar_ = std::make_unique<Progbar>(params().steps, verbose, dynamic, out, options_.clock());
}

void ProgbarLogger::on_train_batch_end(int64_t batch, const Logs& logs) {
  if (bar_) bar_->update(batch + 1, values(logs, false));
}

void ProgbarLogger::on_epoch_end(int, const Logs& logs) {
  if (!bar_) return;
  bar_->finalize(values(logs, true));
  bar_.reset();
}

void ProgbarLogger::on_train_end(const Logs&) {
  if (!bar_) return;  // every epoch finished
  std::ostream& out = options_.out() ? *options_.out() : std::cout;
  out << "\n" << std::flush;
  bar_.reset();
}

}  // namespace torchfit
