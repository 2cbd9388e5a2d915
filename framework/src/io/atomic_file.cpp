#include <torchfit/io/atomic_file.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <torchfit/error.h>
#include <torchfit/runtime/cleanup.h>

namespace fs = std::filesystem;

namespace torchfit::io {
namespace {
// fsync of a file or folder: 0, or the errno of the failure (a folder's failure is not reported by the
// callers: some file systems cannot sync folders).
int fsync_path(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) return errno;
  const int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return err;
}
// The longest file name the folder's file system takes (255 on Linux's usual ones).
size_t name_max(const fs::path& dir) {
  const long n = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return n > 0 ? static_cast<size_t>(n) : 255;
}

// The temporary's name without its pid: ".<name>.tmp" when that leaves room for any pid (10 digits)
// within the file system's name limit; else the name cut short plus "~" and 8 hex digits of its FNV-1a
// hash, so that a legal target name of any length gets a legal temporary, distinct from its neighbours'.
std::string temporary_prefix(const fs::path& dir, const std::string& name) {
  constexpr size_t kPidDigits = 10;
  const size_t limit = name_max(dir);
  const size_t room = limit > 1 + 4 + kPidDigits ? limit - 1 - 4 - kPidDigits : 1;  // "." name ".tmp" pid
  if (name.size() <= room) return "." + name + ".tmp";
  uint32_t hash = 2166136261u;
  for (const unsigned char c : name) hash = (hash ^ c) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", hash);
  const size_t keep = room > 9 ? room - 9 : 0;
  return "." + name.substr(0, keep) + "~" + hex + ".tmp";
}

// Removes temporary files of `target` left by killed writers ("<prefix><pid>" with no such process).
void remove_stale_temporaries(const fs::path& dir, const std::string& name) {
  const std::string prefix = temporary_prefix(dir, name);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = f.substr(prefix.size());
    if (pid_text.empty() || pid_text.size() > 10 || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(e.path(), ec);
  }
}
}  // namespace

void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write_to, bool durable) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw IoError("cannot write '" + path + "': directory '" + dir.string() + "' " +
                  (ec && ec != std::errc::no_such_file_or_directory ? "cannot be used: " + ec.message()
                                                                    : std::string("does not exist")));
  }
  if (durable) remove_stale_temporaries(dir, target.filename().string());
  const std::string tmp =
      (dir / (temporary_prefix(dir, target.filename().string()) + std::to_string(::getpid()))).string();
  const runtime::TemporaryFile registered(tmp);  // removed on exit paths that skip the catch below
  try {
    write_to(tmp);
    if (!fs::exists(tmp)) throw IoError("writer did not create '" + tmp + "'");
    if (const int err = durable ? fsync_path(tmp, false) : 0) {
      throw IoError("cannot write '" + path + "': " + std::strerror(err));
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      throw IoError("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
    }
    if (durable) fsync_path(dir.string(), true);
  } catch (const IoError&) {
    std::remove(tmp.c_str());
    throw;
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());
    throw IoError("cannot write '" + path + "': " + e.what());
  }
}

void write_stream_atomically(const std::string& path, const std::function<void(const ByteSink&)>& produce,
                             bool durable) {
  write_atomically(
      path,
      [&](const std::string& tmp) {
        std::FILE* f = std::fopen(tmp.c_str(), "wb");
        if (!f) throw IoError("cannot write '" + path + "': " + std::strerror(errno));
        int err = 0;
        const ByteSink sink = [&](const void* data, std::size_t size) {
          if (err == 0 && size > 0 && std::fwrite(data, 1, size, f) != size) err = errno ? errno : EIO;
        };
        try {
          produce(sink);
        } catch (...) {
          std::fclose(f);
          throw;
        }
        if (err == 0 && std::fflush(f) != 0) err = errno;
        if (std::fclose(f) != 0 && err == 0) err = errno;  // write_atomically fsyncs (durable) and reports it
        if (err != 0) throw IoError("cannot write '" + path + "': " + std::strerror(err));
      },
      durable);
}

void write_text_atomically(const std::string& path, const std::string& text, bool durable) {
  write_stream_atomically(
      path, [&](const ByteSink& sink) { sink(text.data(), text.size()); }, durable);
}

void sync_filesystem(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError("cannot open '" + path + "' to sync it: " + std::strerror(errno));
  const int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw IoError("cannot sync the file system of '" + path + "': " + std::strerror(err));
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
