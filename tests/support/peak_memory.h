#pragma once
// The process's peak resident memory over a stretch of code (Linux /proc/self/status VmHWM, reset
// through /proc/self/clear_refs), to assert that bad input is refused before memory is spent on it.
#include <fstream>
#include <string>

namespace torchfit::testing {

/// A field of /proc/self/status in kB ("VmRSS", "VmHWM"), -1 when absent.
inline long proc_status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

/// Resets the peak at construction; growth_kb() is how far the peak rose above the resident size then.
/// `usable()` false (no /proc, or a kernel that does not reset the peak) ⇒ why() says why.
class PeakMemory {
 public:
  PeakMemory() {
    std::ofstream("/proc/self/clear_refs") << "5";
    start_kb_ = proc_status_kb("VmRSS");
    const long peak = proc_status_kb("VmHWM");
    usable_ = start_kb_ > 0 && peak >= 0 && peak <= start_kb_ + 4096;
  }
  bool usable() const { return usable_; }
  std::string why() const { return "the peak resident size (VmHWM) cannot be reset through /proc/self/clear_refs"; }
  long growth_kb() const { return proc_status_kb("VmHWM") - start_kb_; }

 private:
  long start_kb_ = -1;
  bool usable_ = false;
};

}  // namespace torchfit::testing
