#pragma once
/// @file environment.h
/// The variables torchrun (torch.distributed.run) sets for each process it starts, read and checked.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace torchfit::distributed {

/// One process's place in a data-parallel run, as torchrun describes it.
struct Environment {
  int rank = 0;              ///< RANK: 0 .. world_size-1 (rank 0 prints and writes the run files)
  int world_size = 1;        ///< WORLD_SIZE: processes in the run (all machines)
  int local_rank = 0;        ///< LOCAL_RANK: index on this machine (CUDA: the GPU, cuda:LOCAL_RANK)
  int local_world_size = 1;  ///< LOCAL_WORLD_SIZE: processes on this machine
  std::string master_addr;   ///< MASTER_ADDR: host of the rendezvous store
  int master_port = 0;       ///< MASTER_PORT: its TCP port (1..65535)
  /// TORCHELASTIC_USE_AGENT_STORE=True (torchrun's static rendezvous, --master_addr/--master_port): the
  /// launcher hosts the store and every rank is a client under store_prefix; otherwise (--standalone,
  /// or variables set by hand) rank 0 hosts it.
  bool agent_store = false;
  int restart_count = 0;  ///< TORCHELASTIC_RESTART_COUNT (0 when unset)
  /// Key prefix of the launcher's store: "/worker/attempt_<restart_count>" (agent store only).
  std::string store_prefix() const;
};

/// Reads a variable: its value, or nullopt when it is not set.
using GetEnv = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (std::getenv).
GetEnv process_environment();

/// Reads RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT and
/// TORCHELASTIC_USE_AGENT_STORE / TORCHELASTIC_RESTART_COUNT. nullopt when neither RANK nor WORLD_SIZE
/// is set (a plain, single-process run). Errors: ConfigError naming the variable and its value — one of
/// RANK / WORLD_SIZE without the other, a value that is not an integer in range (WORLD_SIZE >= 1,
/// 0 <= RANK < WORLD_SIZE, 0 <= LOCAL_RANK < LOCAL_WORLD_SIZE), MASTER_ADDR missing or empty,
/// MASTER_PORT missing or not in 1..65535.
std::optional<Environment> read_environment(const GetEnv& getenv = process_environment());

}  // namespace torchfit::distributed
