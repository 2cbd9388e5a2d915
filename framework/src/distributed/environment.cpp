#include <torchfit/distributed/environment.h>

#include <cerrno>
#include <cstdlib>

#include <torchfit/error.h>

namespace torchfit::distributed {

namespace {

const char* const kLaunchHint = " (set by torchrun: torchrun --nproc_per_node N --no_python PROGRAM ...)";

// The integer value of variable `name` in [lo, hi]; ConfigError naming it and the value otherwise.
int env_int(const std::string& name, const std::string& value, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    throw ConfigError("environment variable " + name + "='" + value + "' is not an integer in [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + "]" + kLaunchHint);
  }
  return static_cast<int>(v);
}

std::string required(const GetEnv& getenv, const std::string& name, const std::string& why) {
  const auto v = getenv(name);
  if (!v || v->empty()) {
    throw ConfigError("environment variable " + name + " is " + (v ? "empty" : "not set") + ": " + why + kLaunchHint);
  }
  return *v;
}

}  // namespace

std::string Environment::store_prefix() const { return "/worker/attempt_" + std::to_string(restart_count); }

GetEnv process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

std::optional<Environment> read_environment(const GetEnv& getenv) {
  const auto rank = getenv("RANK"), world = getenv("WORLD_SIZE");
  if (!rank && !world) return std::nullopt;
  if (!rank || !world) {
    throw ConfigError(std::string("environment variable ") + (rank ? "RANK" : "WORLD_SIZE") + " is set but " +
                      (rank ? "WORLD_SIZE" : "RANK") + " is not: a data-parallel run needs both" + kLaunchHint);
  }
  Environment e;
  e.world_size = env_int("WORLD_SIZE", *world, 1, 1 << 20);
  e.rank = env_int("RANK", *rank, 0, e.world_size - 1);
  if (const auto v = getenv("LOCAL_WORLD_SIZE")) e.local_world_size = env_int("LOCAL_WORLD_SIZE", *v, 1, e.world_size);
  if (const auto v = getenv("LOCAL_RANK")) e.local_rank = env_int("LOCAL_RANK", *v, 0, e.local_world_size - 1);
  e.master_addr = required(getenv, "MASTER_ADDR", "the host of rank 0 (or of torchrun's store) is needed");
  e.master_port = env_int("MASTER_PORT", required(getenv, "MASTER_PORT", "the rendezvous port is needed"), 1, 65535);
  const auto agent = getenv("TORCHELASTIC_USE_AGENT_STORE");
  e.agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
  if (const auto v = getenv("TORCHELASTIC_RESTART_COUNT")) {
    e.restart_count = env_int("TORCHELASTIC_RESTART_COUNT", *v, 0, 1 << 30);
  }
  return e;
}

}  // namespace torchfit::distributed
