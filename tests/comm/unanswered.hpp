#pragma once
// A listener on loopback that never accepts, its queue filled: the kernel drops the next
// handshakes, as a host whose link is down does, so a connection to it waits out its timeout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "engine/comm/reachability.hpp"

namespace laconic::testing {

class Unanswered {
 public:
  /// Binds, listens with a queue of 0 and connects until a try gets no answer within 300 ms
  /// (8 tries at most).
  Unanswered() {
    at_.sin_family = AF_INET;
    at_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof at_;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&at_), sizeof at_) != 0 || ::listen(listener_, 0) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&at_), &length) != 0) {
      last_try_ = "the listener could not be set up";
      return;
    }
    for (int i = 0; i < 8 && last_try_.empty(); ++i)
      if (const int fd = comm::connect_within("127.0.0.1", port(), std::chrono::milliseconds(300), &last_try_); fd >= 0)
        queued_.push_back(fd);
  }
  ~Unanswered() {
    for (int fd : queued_) ::close(fd);
    ::close(listener_);
  }
  Unanswered(const Unanswered&) = delete;
  Unanswered& operator=(const Unanswered&) = delete;

  int port() const { return ntohs(at_.sin_port); }
  /// The connections its queue took.
  std::size_t queued() const { return queued_.size(); }
  /// Why the last try failed ("" when all 8 connected).
  const std::string& last_try() const { return last_try_; }

 private:
  int listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in at_{};
  std::vector<int> queued_;
  std::string last_try_;
};

}  // namespace laconic::testing
