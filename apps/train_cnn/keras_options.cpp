#include "keras_options.h"

#include <sstream>

#include <torchfit/error.h>
#include <torchfit/training/class_weight.h>

namespace train_cnn {
namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

template <typename T>
std::vector<T> numbers(const std::string& flag, const std::string& text) {
  std::vector<T> out;
  for (const auto& item : split(text)) {
    try {
      size_t used = 0;
      const double v = std::stod(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(static_cast<T>(v));
    } catch (const std::exception&) {
      throw torchfit::ConfigError(flag + ": '" + item + "' is not a number");
    }
  }
  return out;
}

std::optional<torchfit::LearningRateScheduleOptions> schedule(const Args& a, int64_t updates) {
  if (a.lr_schedule.empty()) return std::nullopt;
  torchfit::LearningRateScheduleOptions s;
  s.name(a.lr_schedule)
      .decay_steps(a.decay_steps > 0 ? a.decay_steps : std::max<int64_t>(1, updates - a.lr_warmup_steps))
      .decay_rate(a.decay_rate)
      .alpha(a.alpha)
      .boundaries(numbers<int64_t>("--lr-boundaries", a.lr_boundaries))
      .values(numbers<double>("--lr-values", a.lr_values));
  if (a.lr_warmup_steps > 0) s.initial_learning_rate(0.0).warmup_target(a.lr).warmup_steps(a.lr_warmup_steps);
  return s;
}

}  // namespace

torchfit::CompileOptions compile_options(const Args& a, int64_t updates) {
  const auto optimizer = torchfit::OptimizerOptions()
                             .name("adam")
                             .learning_rate(a.lr)
                             .clipnorm(a.clipnorm)
                             .clipvalue(a.clipvalue)
                             .global_clipnorm(a.global_clipnorm)
                             .weight_decay(a.weight_decay)
                             .use_ema(a.ema)
                             .ema_momentum(a.ema_momentum)
                             .gradient_accumulation_steps(a.gradient_accumulation_steps)
                             .learning_rate_schedule(schedule(a, updates));
  const auto metrics = split(a.metrics);
  return torchfit::CompileOptions().loss("categorical_crossentropy").optimizer(optimizer).metrics(metrics);
}

std::map<int64_t, double> class_weight(const Args& a, const torchfit::data::DirectoryIterator& train) {
  if (a.class_weight.empty()) return {};
  if (a.class_weight == "balanced") return torchfit::balanced_class_weight(train.classes(), train.num_classes());
  try {
    return torchfit::read_class_weight(a.class_weight, train.class_indices());
  } catch (const torchfit::ConfigError& e) {
    throw torchfit::ConfigError(std::string("--class-weight: ") + e.what());
  }
}

}  // namespace train_cnn
