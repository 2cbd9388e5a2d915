#pragma once
// Runs a built app through the shell with stdout and stderr captured (the tests of tests/apps/).
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace torchfit::testing {

struct AppRun {
  int status = -1;     ///< exit status (-1: did not run or was killed)
  std::string output;  ///< stdout and stderr
};

/// Runs `command` (already shell-quoted) with `2>&1` appended.
inline AppRun run_app(const std::string& command) {
  AppRun r;
  std::FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int w = ::pclose(p);
  r.status = WIFEXITED(w) ? WEXITSTATUS(w) : -1;
  return r;
}

}  // namespace torchfit::testing
