#include "engine/comm/memory_communicator.hpp"

#include <algorithm>

#include "engine/core/error.hpp"
#include "engine/core/rank_clock.hpp"

namespace laconic::comm {

MemoryNetwork::MemoryNetwork(int size, std::chrono::milliseconds timeout) : timeout_(timeout) {
  LACONIC_ENFORCE(size >= 1, "a memory network needs at least one rank, got ", size);
  for (int r = 0; r < size; ++r) boxes_.push_back(std::make_unique<Box>());
}

void MemoryNetwork::post(int from, int to, std::uint64_t tag, std::span<const std::uint8_t> bytes, double sent_at) {
  Box& box = *boxes_.at(static_cast<std::size_t>(to));
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    box.messages[{from, tag}].push_back({{bytes.begin(), bytes.end()}, sent_at});
  }
  box.arrived.notify_all();
}

MemoryNetwork::Taken MemoryNetwork::take(std::span<const int> from, int to, std::uint64_t tag,
                                         std::span<std::uint8_t> into) {
  Box& box = *boxes_.at(static_cast<std::size_t>(to));
  std::unique_lock<std::mutex> lock(box.mutex);
  auto found = box.messages.end();
  int sender = -1;
  const bool got = box.arrived.wait_for(lock, timeout_, [&] {
    if (aborted_) return true;
    for (int f : from) {
      found = box.messages.find({f, tag});
      if (found != box.messages.end()) {
        sender = f;
        return true;
      }
    }
    return false;
  });
  if (aborted_) {
    std::lock_guard<std::mutex> reason(abort_mutex_);
    throw CommError(str_cat("rank ", to, " stopped waiting: ", abort_reason_));
  }
  if (!got)
    throw CommError(str_cat("rank ", to, ": no message on tag ", tag, " within ",
                            std::chrono::duration<double>(timeout_).count(), " s"));
  auto& queue = found->second;
  const Message& message = queue.front();
  LACONIC_ENFORCE(message.bytes.size() == into.size(), "rank ", to, " expected ", into.size(), " bytes from rank ",
                  sender, ", got ", message.bytes.size());
  std::copy(message.bytes.begin(), message.bytes.end(), into.begin());
  const Taken taken{sender, message.sent_at};
  queue.pop_front();
  // Tags grow with every message: an emptied queue goes, or the mailbox would keep one per message.
  if (queue.empty()) box.messages.erase(found);
  return taken;
}

void MemoryNetwork::abort(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(abort_mutex_);
    if (aborted_) return;
    abort_reason_ = why;
    aborted_ = true;
  }
  for (auto& box : boxes_) {
    std::lock_guard<std::mutex> lock(box->mutex);  // a waiter checks aborted_ under it
    box->arrived.notify_all();
  }
}

double MemoryCommunicator::sent_at() const { return rank_clock() == RankClockKind::ThreadCpu ? derived_now() : 0.0; }

void MemoryCommunicator::received(const MemoryNetwork::Taken& taken) const {
  if (rank_clock() == RankClockKind::ThreadCpu) receive_sent_at(taken.sent_at);
}

void MemoryCommunicator::transfer(int to, std::span<const std::uint8_t> send, std::uint64_t send_tag, int from,
                                  std::span<std::uint8_t> recv, std::uint64_t recv_tag) {
  if (!send.empty()) network_.post(rank_, to, send_tag, send, sent_at());
  if (!recv.empty()) {
    const int peer[] = {from};
    received(network_.take(peer, rank_, recv_tag, recv));
  }
}

int MemoryCommunicator::transfer_from_any(std::span<const int> from, std::span<std::uint8_t> recv, std::uint64_t tag) {
  const MemoryNetwork::Taken taken = network_.take(from, rank_, tag, recv);
  received(taken);
  return taken.sender;
}

}  // namespace laconic::comm
