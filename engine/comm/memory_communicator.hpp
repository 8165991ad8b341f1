#pragma once
// A Communicator over memory, for ranks that are threads of one process (placement = threads):
// each message a copy left in its receiver's mailbox, keyed by sender and tag, until the receiver
// takes it. The collectives are the Communicator's own, so they move and count the same bytes
// and messages in the same order as over Gloo, and give the same sums bit for bit.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/comm/communicator.hpp"

namespace laconic::comm {

/// The mailboxes of one process's ranks, and where they leave their arrival at each exchange.
class MemoryNetwork {
 public:
  /// `size` ranks; a receive waits at most `timeout` for its message (CommError then).
  MemoryNetwork(int size, std::chrono::milliseconds timeout);

  int size() const { return static_cast<int>(boxes_.size()); }

  /// Leaves a copy of `bytes` for rank `to`, from `from`, on `tag`.
  void post(int from, int to, std::uint64_t tag, std::span<const std::uint8_t> bytes);
  /// Takes the oldest message to `to` on `tag` from any of `from` into `into` (which must be its
  /// size); returns the sender. CommError on timeout, or once the network was aborted.
  int take(std::span<const int> from, int to, std::uint64_t tag, std::span<std::uint8_t> into);
  /// A rank failed: every wait, now and later, ends with CommError naming `why`.
  void abort(const std::string& why);

  /// Rank `rank` reached exchange number `exchange` after `seconds` of its step's compute.
  void post_arrival(int rank, std::uint64_t exchange, double seconds);
  /// The latest arrival at exchange `exchange`: valid once every rank has entered the exchange's
  /// collective (after it, for a collective every rank takes part in).
  double latest_arrival(std::uint64_t exchange) const;

 private:
  struct Box {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::pair<int, std::uint64_t>, std::deque<std::vector<std::uint8_t>>> messages;
  };
  std::vector<std::unique_ptr<Box>> boxes_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  std::mutex abort_mutex_;
  std::string abort_reason_;
  /// Arrivals by exchange parity: a rank cannot post exchange k + 2 before every rank has left
  /// the collective of exchange k (it needs them all for exchange k + 1).
  std::vector<double> arrivals_[2];
};

class MemoryCommunicator : public Communicator {
 public:
  MemoryCommunicator(MemoryNetwork& network, int rank) : network_(network), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return network_.size(); }
  ArrivalBoard* arrivals() override { return &board_; }

 protected:
  void transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                std::span<std::uint8_t> recv, std::uint64_t recv_tag) override;
  int transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) override;

 private:
  // This rank's view of the network's arrivals.
  class Board : public ArrivalBoard {
   public:
    Board(MemoryNetwork& network, int rank) : network_(network), rank_(rank) {}
    void arrive(double seconds) override { network_.post_arrival(rank_, exchange_, seconds); }
    double latest() override { return network_.latest_arrival(exchange_++); }

   private:
    MemoryNetwork& network_;
    int rank_;
    std::uint64_t exchange_ = 0;
  };

  MemoryNetwork& network_;
  int rank_;
  Board board_{network_, rank_};
};

}  // namespace laconic::comm
