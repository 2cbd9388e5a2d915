// torchfit's log lines on stderr (spdlog's built-in default logger writes to stdout).
#include <torchfit/runtime/logging.h>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace torchfit {

namespace {

// spdlog's own default: unnamed, one colour sink on stdout.
bool is_builtin_default(const spdlog::logger& l) {
  const auto& sinks = l.sinks();
  return l.name().empty() && sinks.size() == 1 &&
         dynamic_cast<spdlog::sinks::stdout_color_sink_mt*>(sinks.front().get()) != nullptr;
}

}  // namespace

void log_to_stderr() {
  const std::shared_ptr<spdlog::logger> old = spdlog::default_logger();
  auto l = std::make_shared<spdlog::logger>("", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  l->set_level(old->level());
  l->flush_on(old->flush_level());
  spdlog::set_default_logger(std::move(l));
}

spdlog::logger& logger() {
  static const bool moved = [] {
    if (is_builtin_default(*spdlog::default_logger_raw())) log_to_stderr();
    return true;
  }();
  (void)moved;
  return *spdlog::default_logger_raw();
}

}  // namespace torchfit
