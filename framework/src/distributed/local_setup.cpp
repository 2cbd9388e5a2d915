// One torchrun process on its machine (local_setup.h).
#include <torchfit/distributed/local_setup.h>

#include <algorithm>

#include <torchfit/runtime/device.h>
#include <torchfit/runtime/logging.h>
#include <torchfit/runtime/process.h>

namespace torchfit::distributed {

c10::Device local_device(const std::string& spec, const std::optional<Environment>& env) {
  const c10::Device device = runtime::parse_device(spec);
  if (env && device.is_cuda() && (spec == "auto" || spec == "cuda"))
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(env->local_rank));
  return device;
}

int local_share_of_cores(int requested, const std::optional<Environment>& env) {
  if (requested > 0 || !env || env->local_world_size == 1) return requested;
  return std::max(1, runtime::cpu_cores() / env->local_world_size);
}

std::shared_ptr<ProcessGroup> join_process_group(const std::optional<Environment>& env,
                                                 const ProcessGroupOptions& options) {
  if (!env) return nullptr;
  if (env->world_size == 1) {
    torchfit::logger().info("WORLD_SIZE=1: training in this one process (no process group)");
    return nullptr;
  }
  return ProcessGroup::create(*env, options);
}

}  // namespace torchfit::distributed
