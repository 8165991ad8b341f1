#pragma once
// Whether one host reaches another over TCP, asked without the other's main thread: a Beacon is
// a socket that listens on a rank's address and accepts every connection (a thread of its own
// closes them at once); `reaches` opens a connection to it within a timeout. An elastic run's
// worker 0 keeps one, so that a member cut off from it (a link down, a partition) finds out
// itself, without anyone waiting on it (engine/comm/elastic.hpp).
#include <chrono>
#include <memory>
#include <string>

namespace laconic::comm {

/// Where a rank listens, as Gloo resolves it: the interface's address when `interface` is set,
/// else `hostname`'s.
struct ListenAddress {
  std::string hostname = "127.0.0.1";
  std::string interface;
};

class Beacon {
 public:
  /// Listens on `where` at a port the system picks (CommError when it cannot).
  explicit Beacon(const ListenAddress& where);
  ~Beacon();
  Beacon(const Beacon&) = delete;
  Beacon& operator=(const Beacon&) = delete;

  /// "ADDRESS PORT" (numeric), what `reaches` takes.
  const std::string& address() const { return address_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string address_;
};

/// A blocking TCP socket connected to numeric `host` (IPv4 or IPv6) at `port` within `timeout`,
/// or -1 with the reason in `why` (when not null): "connect to 10.0.0.2 port 4000: Network is
/// unreachable", "... no answer within 2000 ms".
int connect_within(const std::string& host, int port, std::chrono::milliseconds timeout, std::string* why);

/// Whether a connection to `beacon_address` (Beacon::address) opens within `timeout`; the
/// reason it did not in `why` (when not null).
bool reaches(const std::string& beacon_address, std::chrono::milliseconds timeout, std::string* why);

}  // namespace laconic::comm
