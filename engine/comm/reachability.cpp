#include "engine/comm/reachability.hpp"

#include <fcntl.h>
#include <gloo/transport/tcp/device.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "engine/core/error.hpp"
#include "engine/core/periodic_thread.hpp"

namespace laconic::comm {
namespace {

// The listening socket's port, set in place in an IPv4 or IPv6 address.
void set_port(sockaddr_storage& address, int port) {
  if (address.ss_family == AF_INET6)
    reinterpret_cast<sockaddr_in6&>(address).sin6_port = htons(static_cast<std::uint16_t>(port));
  else
    reinterpret_cast<sockaddr_in&>(address).sin_port = htons(static_cast<std::uint16_t>(port));
}

// "ADDRESS PORT" of a bound socket.
std::string numeric_address_of(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  char host[NI_MAXHOST];
  char port[NI_MAXSERV];
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0 ||
      ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), length, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    throw CommError(str_cat("beacon: cannot name its own address: ", std::strerror(errno)));
  return str_cat(host, " ", port);
}

}  // namespace

struct Beacon::Impl {
  int fd = -1;
  // Accepts and closes what waits, every 20 ms: a probe only needs the handshake, which the
  // kernel completes, but an unaccepted queue would fill and refuse the next ones.
  std::unique_ptr<PeriodicThread> drain;
};

Beacon::Beacon(const ListenAddress& where) : impl_(std::make_unique<Impl>()) {
  gloo::transport::tcp::attr wanted;
  if (where.interface.empty())
    wanted.hostname = where.hostname;
  else
    wanted.iface = where.interface;
  const std::string named = where.interface.empty() ? where.hostname : "interface " + where.interface;
  gloo::transport::tcp::attr resolved;
  try {
    resolved = gloo::transport::tcp::CreateDeviceAttr(wanted);
  } catch (const std::exception& e) {
    throw CommError(str_cat("beacon: cannot find the address of ", named, ": ", e.what()));
  }
  set_port(resolved.ai_addr, 0);
  impl_->fd = ::socket(resolved.ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (impl_->fd < 0 ||
      ::bind(impl_->fd, reinterpret_cast<sockaddr*>(&resolved.ai_addr), static_cast<socklen_t>(resolved.ai_addrlen)) !=
          0 ||
      ::listen(impl_->fd, 64) != 0) {
    const std::string why = std::strerror(errno);
    if (impl_->fd >= 0) ::close(impl_->fd);
    throw CommError(str_cat("beacon: cannot listen on ", named, ": ", why));
  }
  address_ = numeric_address_of(impl_->fd);
  const int fd = impl_->fd;
  impl_->drain = std::make_unique<PeriodicThread>(std::chrono::milliseconds(20), [fd] {
    for (int client; (client = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) ::close(client);
  });
}

Beacon::~Beacon() {
  impl_->drain.reset();  // stopped before its socket closes
  ::close(impl_->fd);
}

int connect_within(const std::string& host, int port, std::chrono::milliseconds timeout, std::string* why) {
  const auto fail = [&](const std::string& reason) {
    if (why != nullptr) *why = str_cat("connect to ", host, " port ", port, ": ", reason);
    return -1;
  };
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int e = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0)
    return fail(::gai_strerror(e));
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    return fail(std::strerror(errno));
  }
  const int connected = ::connect(fd, found->ai_addr, found->ai_addrlen);
  const int connect_error = errno;
  ::freeaddrinfo(found);
  if (connected != 0) {
    if (connect_error != EINPROGRESS) {
      ::close(fd);
      return fail(std::strerror(connect_error));
    }
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(timeout.count()));
    int error = 0;
    socklen_t length = sizeof error;
    if (ready != 1 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      ::close(fd);
      return fail(ready == 1 ? std::strerror(error) : str_cat("no answer within ", timeout.count(), " ms"));
    }
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

bool reaches(const std::string& beacon_address, std::chrono::milliseconds timeout, std::string* why) {
  std::istringstream fields(beacon_address);
  std::string host;
  int port = -1;
  if (!(fields >> host >> port)) {
    if (why != nullptr) *why = str_cat("'", beacon_address, "' is not a beacon's address");
    return false;
  }
  const int fd = connect_within(host, port, timeout, why);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

}  // namespace laconic::comm
