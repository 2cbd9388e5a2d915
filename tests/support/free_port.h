#pragma once
/// A TCP port on 127.0.0.1 for tests that start a c10d store (loopback only).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace torchfit::testing {

/// A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick for port 0).
inline int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace torchfit::testing
