#pragma once
// The threads `laconic ui` answers connections on (cpp-httplib's TaskQueue), and the bound on one
// client's connections. httplib's own pool is 8 threads, each held by a connection until it
// closes or its read times out, so 8 connections that send half a request stopped the server
// for as long. This pool starts a thread for each connection waiting while fewer than its cap
// exist: a half-open connection holds its own thread (until the read timeout), never one that
// another request needs. A client (an address) that holds more than its share of connections
// is answered 503 on the next one that sends a request.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace laconic::ui {

class ConnectionPool : public httplib::TaskQueue {
 public:
  /// At most `max_threads` connections are served at once (the rest wait their turn), and at most
  /// `per_client` of them from one address.
  ConnectionPool(std::size_t max_threads, std::size_t per_client);
  ~ConnectionPool() override;

  void enqueue(std::function<void()> connection) override;
  /// Waits for the connections being served (each ends at its read or keep-alive timeout, or
  /// when the server stops) and their threads.
  void shutdown() override;

  /// Called with the address of the connection being served on this thread when it sends its
  /// first request: false when that client has `per_client` connections being served already
  /// (this one is then refused). Counted until the connection closes.
  bool admit(const std::string& address);

  std::size_t threads() const;

 private:
  void work();

  const std::size_t max_threads_, per_client_;
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> waiting_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool shutdown_ = false;
  std::map<std::string, std::size_t> per_address_;
};

}  // namespace laconic::ui
