#pragma once
// A Communicator over memory, for ranks that are threads of one process (placement = threads):
// each message a copy left in its receiver's mailbox, keyed by sender and tag, until the receiver
// takes it. The collectives are the Communicator's own, so they move and count the same bytes
// and messages in the same order as over Gloo, and give the same sums bit for bit. Each message
// carries its sender's derived clock (engine/core/rank_clock.hpp) for ranks timed on their CPU:
// its receiver waits until then, whatever the pattern of messages.
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
#include "engine/core/rank_clock.hpp"

namespace laconic::comm {

/// The mailboxes of one process's ranks.
class MemoryNetwork {
 public:
  /// `size` ranks; a receive waits at most `timeout` for its message (CommError then).
  MemoryNetwork(int size, std::chrono::milliseconds timeout);

  int size() const { return static_cast<int>(boxes_.size()); }

  /// Leaves a copy of `bytes` for rank `to`, from `from`, on `tag`, sent at `sent_at` on the
  /// sender's derived clock.
  void post(int from, int to, std::uint64_t tag, std::span<const std::uint8_t> bytes, double sent_at = 0);
  /// A message taken: who sent it, and when on the sender's derived clock.
  struct Taken {
    int sender;
    double sent_at;
  };
  /// Takes the oldest message to `to` on `tag` from any of `from` into `into` (which must be its
  /// size). CommError on timeout, or once the network was aborted.
  Taken take(std::span<const int> from, int to, std::uint64_t tag, std::span<std::uint8_t> into);
  /// A rank failed: every wait, now and later, ends with CommError naming `why`.
  void abort(const std::string& why);

 private:
  struct Message {
    std::vector<std::uint8_t> bytes;
    double sent_at;
  };
  struct Box {
    std::mutex mutex;
    std::condition_variable arrived;
    std::map<std::pair<int, std::uint64_t>, std::deque<Message>> messages;
  };
  std::vector<std::unique_ptr<Box>> boxes_;
  std::chrono::milliseconds timeout_;
  std::atomic<bool> aborted_{false};
  std::mutex abort_mutex_;
  std::string abort_reason_;
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
  // This rank's arrival at an exchange and when it could go on: the latest clock of whatever its
  // collectives received, which the messages carried (a ring's, a tree's or a one-shot's
  // messages reach every rank from every other, directly or through the ranks between).
  class Board : public ArrivalBoard {
   public:
    void arrive(double seconds) override {
      arrival_ = seconds;
      waited_before_ = phase_waited();
    }
    double latest() override { return arrival_ + phase_waited() - waited_before_; }

   private:
    double arrival_ = 0, waited_before_ = 0;
  };

  /// The rank's derived clock when it times itself on its CPU (thread ranks); 0 otherwise.
  double sent_at() const;
  /// Moves the rank's derived clock up to a received message's `sent_at` (thread ranks).
  void received(const MemoryNetwork::Taken& taken) const;

  MemoryNetwork& network_;
  int rank_;
  Board board_;
};

}  // namespace laconic::comm
