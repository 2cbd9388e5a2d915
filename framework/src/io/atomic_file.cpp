#include <torchfit/io/atomic_file.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <torchfit/error.h>

namespace fs = std::filesystem;

namespace torchfit::io {
namespace {
void fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}
}  // namespace

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write_to) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir)) throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  const std::string tmp = (dir / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()))).string();
  try {
    write_to(tmp);
    if (!fs::exists(tmp)) throw IoError("writer did not create '" + tmp + "'");
    fsync_path(tmp, false);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
    }
    fsync_path(dir.string(), true);
  } catch (const IoError&) {
    std::remove(tmp.c_str());
    throw;
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    throw IoError("cannot write '" + path + "': " + e.what());
  }
}

void write_text_atomically(const std::string& path, const std::string& text) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw IoError("cannot open '" + tmp + "' for writing: " + std::strerror(errno));
    f << text;
    f.flush();
    if (!f) throw IoError("cannot write '" + tmp + "' (disk full?)");
  });
}

void ensure_writable_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create directory '" + dir + "': " + ec.message());
  const std::string probe = (fs::path(dir) / ".torchfit_write_probe").string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (!f) throw IoError("directory '" + dir + "' is not writable: " + std::strerror(errno));
  const char block[4096] = {};
  const bool ok = std::fwrite(block, 1, sizeof block, f) == sizeof block && std::fflush(f) == 0;
  const int err = errno;
  std::fclose(f);
  std::remove(probe.c_str());
  if (!ok) throw IoError("cannot write to directory '" + dir + "': " + std::strerror(err));
}

}  // namespace torchfit::io
