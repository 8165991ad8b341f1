#pragma once
// A Communicator over memory: ranks are threads of one process, each message a copy in a
// mailbox keyed by (sender, receiver, tag). For protocol tests that need neither sockets nor a
// store (Gloo's own tests do the same with an in-memory store).
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "engine/comm/communicator.hpp"
#include "engine/core/error.hpp"

namespace laconic::testing {

/// The mailboxes every rank of one test shares.
class MemoryNetwork {
 public:
  void post(int from, int to, std::uint64_t tag, std::span<const std::uint8_t> bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      boxes_[{from, to, tag}].emplace_back(bytes.begin(), bytes.end());
    }
    arrived_.notify_all();
  }
  /// The oldest message from any of `from` to `to` on `tag`; its sender. CommError after 10 s.
  int take(std::span<const int> from, int to, std::uint64_t tag, std::span<std::uint8_t> into) {
    std::unique_lock<std::mutex> lock(mutex_);
    int sender = -1;
    const bool got = arrived_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (int f : from) {
        const auto it = boxes_.find({f, to, tag});
        if (it != boxes_.end() && !it->second.empty()) {
          sender = f;
          return true;
        }
      }
      return false;
    });
    if (!got) throw CommError(str_cat("rank ", to, ": no message on tag ", tag, " within 10 s"));
    auto& box = boxes_[{sender, to, tag}];
    LACONIC_ENFORCE(box.front().size() == into.size(), "rank ", to, " expected ", into.size(), " bytes from rank ",
                    sender, ", got ", box.front().size());
    std::copy(box.front().begin(), box.front().end(), into.begin());
    box.pop_front();
    return sender;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::tuple<int, int, std::uint64_t>, std::deque<std::vector<std::uint8_t>>> boxes_;
};

class MemoryCommunicator : public comm::Communicator {
 public:
  MemoryCommunicator(MemoryNetwork& network, int rank, int size) : network_(network), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }

 protected:
  void transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                std::span<std::uint8_t> recv, std::uint64_t recv_tag) override {
    if (!send.empty()) network_.post(rank_, to, send_tag, send);
    if (!recv.empty()) {
      const int peer[] = {from};
      network_.take(peer, rank_, recv_tag, recv);
    }
  }
  int transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) override {
    return network_.take(from, rank_, tag, recv);
  }

 private:
  MemoryNetwork& network_;
  int rank_, size_;
};

/// Runs fn(comm) on `size` ranks, one thread each, over one MemoryNetwork; rethrows the first
/// exception a rank threw.
inline void run_memory_ranks(int size, const std::function<void(comm::Communicator&)>& fn) {
  MemoryNetwork network;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        MemoryCommunicator comm(network, r, size);
        fn(comm);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace laconic::testing
