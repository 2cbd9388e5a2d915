#pragma once
/// @file local_setup.h
/// One process of a torchrun run on its machine: its device, its share of the cores, its process group.
#include <memory>
#include <optional>
#include <string>

#include <c10/core/Device.h>

#include <torchfit/distributed/environment.h>
#include <torchfit/distributed/process_group.h>

namespace torchfit::distributed {

/// The device of `spec` (runtime::parse_device: "cpu", "cuda", "cuda:N", "auto"); under torchrun (`env`
/// set), "cuda" and "auto" on a CUDA machine are cuda:LOCAL_RANK, one GPU per process of the machine.
/// Errors: as runtime::parse_device.
c10::Device local_device(const std::string& spec, const std::optional<Environment>& env);

/// `requested` threads (or workers) when > 0, or outside torchrun, or for the only process of its machine;
/// otherwise (0 = "all cores") the cores shared evenly by the LOCAL_WORLD_SIZE processes of this machine
/// (runtime::cpu_cores() / LOCAL_WORLD_SIZE, at least 1).
int local_share_of_cores(int requested, const std::optional<Environment>& env);

/// The data-parallel group of `env` (ProcessGroup::create: waits for every rank), or nullptr outside
/// torchrun and for WORLD_SIZE=1 (logged: training in this one process). Errors: as ProcessGroup::create.
std::shared_ptr<ProcessGroup> join_process_group(const std::optional<Environment>& env,
                                                 const ProcessGroupOptions& options);

}  // namespace torchfit::distributed
