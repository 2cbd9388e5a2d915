#pragma once
// A real, tiny file system for write-failure tests: a tmpfs of a given size on a fresh directory.
#include <sys/mount.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "support/temp_dir.h"

namespace torchfit::testing {

/// A tmpfs of `bytes` (rounded up to pages) mounted on a fresh temporary directory; unmounted and removed
/// at scope exit. Mounting needs root (mount(2)): when it fails, `mounted` is false and `reason` says why
/// (tests then GTEST_SKIP with it).
struct SmallFilesystem {
  TempDir dir{"tmpfs"};
  bool mounted = false;
  std::string reason;
  explicit SmallFilesystem(std::size_t bytes) {
    const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
    mounted = ::mount("tmpfs", dir.str().c_str(), "tmpfs", 0, options.c_str()) == 0;
    if (!mounted) reason = std::string("cannot mount a tmpfs (needs root): ") + std::strerror(errno);
  }
  ~SmallFilesystem() {
    if (mounted) ::umount2(dir.str().c_str(), MNT_DETACH);
  }
  SmallFilesystem(const SmallFilesystem&) = delete;
  SmallFilesystem& operator=(const SmallFilesystem&) = delete;
  /// Path of `name` on the small file system.
  std::string file(const std::string& name) const { return dir.file(name); }
};

}  // namespace torchfit::testing
