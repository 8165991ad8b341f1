#pragma once
// The connections between rank 0 and the other ranks of a launched sweep (docs/multi-host.md):
// one TCP connection per rank, apart from Gloo's, so that nothing on it is counted as training
// traffic. Rank 0 listens and publishes its address in the store; each rank connects and says
// who it is and what it planned; rank 0 checks that every rank agrees before anything trains.
//
// On a connection, rank 0 sends one order per line (controller/relay_protocol.hpp: train a run, signal
// your worker, a sign of life, the sweep is over). The rank answers with its worker's message
// lines (engine/core/worker_message.hpp) as they come, then the worker's exit.
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/relay_protocol.hpp"
#include "engine/comm/store.hpp"

namespace laconic::controller {

/// One line-framed TCP connection. Owns its socket.
class RelayConnection {
 public:
  RelayConnection(int fd, RankHello peer);
  ~RelayConnection();
  RelayConnection(const RelayConnection&) = delete;
  RelayConnection& operator=(const RelayConnection&) = delete;

  int fd() const { return fd_; }
  const RankHello& peer() const { return peer_; }
  void set_peer(RankHello peer) { peer_ = std::move(peer); }
  /// Sends `line` and a newline, whole; false when the peer is gone.
  bool send_line(const std::string& line);
  /// The next line (without its newline), waiting up to `timeout`; nothing on timeout or when
  /// the peer closed (closed() then says so).
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  bool closed() const { return closed_; }
  /// Bytes received after the last line read_line returned (the launcher reads on from them).
  std::string take_buffered();

 private:
  int fd_;
  RankHello peer_;
  std::string buffer_;
  bool closed_ = false;
};

/// The store key under which rank 0 publishes its address: one for every experiment of a launch
/// (LaunchedRank::launch_id), so that ranks whose files differ still meet and are told so, and two
/// launches sharing a store (one Redis server) never take each other's ranks.
std::string relay_key(const std::string& launch_id);

/// Rank 0: listens on `address`, publishes it in `store` under `key`, and waits up to `timeout`
/// for every other rank to join. Each hello is checked against `mine` (same world, file hash and
/// plan; each rank once); on any difference every rank that joined is told why and ConfigError
/// names the rank that differs; CommError names the ranks that did not join in time. Returns the
/// connections ordered by rank (ranks 1 to world - 1) and sets `nonce` to this launch's key
/// prefix for the runs' rendezvous. StoppedError, within a second, once `stop` is true.
std::vector<std::unique_ptr<RelayConnection>> gather_ranks(comm::KeyValueStore& store, const std::string& key,
                                                           const std::string& address, const RankHello& mine,
                                                           std::chrono::milliseconds timeout, std::string& nonce,
                                                           const std::atomic<bool>& stop);

/// Any other rank: reads rank 0's address from `store` and joins (retrying while the address is
/// an old launch's), sends `mine`, and waits for rank 0's answer. ConfigError with rank 0's
/// reason when it refuses; CommError when rank 0 cannot be reached within `timeout`. Sets
/// `nonce` to rank 0's. StoppedError, within a second, once `stop` is true.
std::unique_ptr<RelayConnection> join_rank0(comm::KeyValueStore& store, const std::string& key, const RankHello& mine,
                                            std::chrono::milliseconds timeout, std::string& nonce,
                                            const std::atomic<bool>& stop);

}  // namespace laconic::controller
