#include <torchfit/training/progbar.h>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace torchfit {
namespace {
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// Keras's "  7/100": `current` right-aligned to the width of `target`.
std::string step_count(int64_t current, int64_t target) {
  const std::string n = std::to_string(current), of = std::to_string(std::max<int64_t>(target, 1));
  return std::string(of.size() > n.size() ? of.size() - n.size() : 0, ' ') + n + "/" + std::to_string(target);
}
double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

bool is_terminal(std::ostream& out) { return &out == &std::cout && ::isatty(STDOUT_FILENO); }

Progbar::Progbar(int64_t target, int verbose, bool dynamic, std::ostream& out, Clock clock)
    : target_(target), verbose_(verbose), dynamic_(dynamic), out_(out), clock_(clock ? clock : steady_seconds) {
  start_ = clock_();
}

std::string Progbar::bar(int64_t current, int64_t target, int width) {
  const int64_t prog = target > 0 ? width * current / target : width;
  std::string b = "[";
  if (prog > 0) {
    b += std::string(static_cast<size_t>(prog - 1), '=');
    b += current < target ? '>' : '=';
  }
  b += std::string(static_cast<size_t>(width - prog), '.');
  return b + "]";
}

std::string Progbar::format_value(double v) { return std::fabs(v) > 1e-3 ? fmt("%.4f", v) : fmt("%.4e", v); }

std::string Progbar::values_text(const Values& values) const {
  std::string s;
  for (const auto& [k, v] : values) s += " - " + k + ": " + format_value(v);
  return s;
}

std::string Progbar::per_step_text(double t) const {
  if (t >= 1 || t == 0) return fmt("%.0fs/step", t);
  if (t >= 1e-3) return fmt("%.0fms/step", t * 1e3);
  return fmt("%.0fus/step", t * 1e6);
}

double Progbar::seconds_per_step(double now) const {
  // As Keras ≥ 2.5 (_estimate_step_duration): after the first step, its (warm-up) time is left out.
  if (current_ > 1 && first_step_end_ >= 0) return (now - first_step_end_) / static_cast<double>(current_ - 1);
  return current_ > 0 ? (now - start_) / static_cast<double>(current_) : 0.0;
}

void Progbar::update(int64_t current, const Values& values) {
  current_ = current;
  if (current == 1 && first_step_end_ < 0) first_step_end_ = clock_();
  if (verbose_ != 1 || !dynamic_ || current >= target_) return;
  const double now = clock_();
  if (last_print_ >= 0 && now - last_print_ < 0.05) return;  // Keras: at most every 0.05 s
  last_print_ = now;
  const std::string count = step_count(current, target_) + " ";
  const double per = seconds_per_step(now);
  const double eta = per * static_cast<double>(target_ - current);
  std::string eta_text;
  if (eta > 3600) {
    char b[64];
    std::snprintf(b, sizeof b, "%d:%02d:%02d", static_cast<int>(eta) / 3600, (static_cast<int>(eta) % 3600) / 60,
                  static_cast<int>(eta) % 60);
    eta_text = b;
  } else if (eta > 60) {
    char b[64];
    std::snprintf(b, sizeof b, "%d:%02d", static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
    eta_text = b;
  } else {
    eta_text = fmt("%.0fs", eta);
  }
  std::string line = count + bar(current, target_) + " - ETA: " + eta_text + values_text(values);
  const size_t width = line.size();
  if (width < prev_width_) line += std::string(prev_width_ - width, ' ');
  prev_width_ = width;
  out_ << "\r" << line << std::flush;
}

void Progbar::finalize(const Values& values) {
  if (verbose_ == 0) return;
  const double now = clock_();
  const double elapsed = now - start_;
  const std::string count = step_count(current_, target_);
  std::string line;
  if (verbose_ == 1) {
    line = count + " " + bar(current_, target_) + " - " + fmt("%.0fs", elapsed) + " " +
           per_step_text(seconds_per_step(now)) + values_text(values);
  } else {
    line = count + " - " + fmt("%.0fs", elapsed) + " - " + per_step_text(seconds_per_step(now)) + values_text(values);
  }
  if (dynamic_ && verbose_ == 1) {
    if (line.size() < prev_width_) line += std::string(prev_width_ - line.size(), ' ');
    out_ << "\r";
  }
  out_ << line << "\n" << std::flush;
}

}  // namespace torchfit
