#pragma once
// Shared by the apps: CLI11 parsing with torchfit's exit status (2 for any bad flag or value; 0 for --help),
// and readable range checks (CLI11's PositiveNumber prints the whole range of a double).
#include <CLI/CLI.hpp>

#include <climits>

namespace torchfit::apps {
/// Integer flag in [lo, hi].
inline CLI::Range int_range(long long lo, long long hi = INT_MAX) {
  return CLI::Range(lo, hi);
}
}  // namespace torchfit::apps

#define TORCHFIT_CLI_PARSE(app, argc, argv)   \
  try {                                         \
    (app).parse((argc), (argv));                \
  } catch (const CLI::ParseError& e) {          \
    return (app).exit(e) == 0 ? 0 : 2;          \
  }
