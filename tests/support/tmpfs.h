#pragma once
// A real small file system for write-failure tests: a tmpfs of a few KiB mounted on a fresh folder
// (the test process must be root; otherwise the test skips itself with the reason).
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/temp_dir.h"

namespace torchfit::testing {

/// A tmpfs of `size` (mount's size= option, e.g. "64k") on a fresh folder, unmounted at scope exit.
/// `mounted()` false ⇒ `why()` says why (call GTEST_SKIP() << why()).
class SmallFilesystem {
 public:
  explicit SmallFilesystem(const std::string& size = "64k") : dir_("tmpfs") {
    const std::string options = "size=" + size;
    if (::mount("tmpfs", dir_.path.c_str(), "tmpfs", 0, options.c_str()) == 0) {
      mounted_ = true;
    } else {
      why_ = "cannot mount a tmpfs on " + dir_.str() + " (" + std::strerror(errno) + "; needs root)";
    }
  }
  ~SmallFilesystem() {
    if (mounted_) ::umount2(dir_.path.c_str(), MNT_DETACH);
  }
  SmallFilesystem(const SmallFilesystem&) = delete;
  SmallFilesystem& operator=(const SmallFilesystem&) = delete;

  bool mounted() const { return mounted_; }
  const std::string& why() const { return why_; }
  const std::filesystem::path& path() const { return dir_.path; }
  std::string file(const std::string& name) const { return dir_.file(name); }

  /// Writes zeros into `name` until the file system refuses (ENOSPC): the disk is full afterwards.
  void fill(const std::string& name = "filler") const {
    std::FILE* f = std::fopen(file(name).c_str(), "wb");
    if (!f) return;
    const std::vector<char> block(4096, 0);
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }
  /// Remounts read-only (true on success).
  bool make_read_only() const {
    return ::mount("tmpfs", dir_.path.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string why_;
};

}  // namespace torchfit::testing
